#include "core/errors.h"

namespace nuvec {
namespace {
CallSiteHooks g_hooks;
}
void set_call_site_hooks(CallSiteHooks hooks) { g_hooks = hooks; }
CallSite capture_call_site() { return g_hooks.capture ? g_hooks.capture() : CallSite{}; }
void release_call_site(CallSite site) {
  if (site.handle && g_hooks.release) g_hooks.release(site);
}
std::string describe_call_site(CallSite site) {
  return site.handle && g_hooks.describe ? g_hooks.describe(site) : std::string();
}
}  // namespace nuvec
