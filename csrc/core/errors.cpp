#include "core/errors.h"

namespace nuvec {
namespace {
CallSiteHooks g_hooks;
thread_local const CallSite* g_pinned = nullptr;  // the innermost PinnedCallSite's site
}  // namespace
void set_call_site_hooks(CallSiteHooks hooks) { g_hooks = hooks; }
CallSite capture_call_site() {
  if (g_pinned) return g_pinned->handle && g_hooks.retain ? g_hooks.retain(*g_pinned) : CallSite{};
  return g_hooks.capture ? g_hooks.capture() : CallSite{};
}
PinnedCallSite::PinnedCallSite() : site_(capture_call_site()), outer_(g_pinned) { g_pinned = &site_; }
PinnedCallSite::~PinnedCallSite() {
  g_pinned = outer_;
  release_call_site(site_);
}
void release_call_site(CallSite site) {
  if (site.handle && g_hooks.release) g_hooks.release(site);
}
std::string describe_call_site(CallSite site) {
  return site.handle && g_hooks.describe ? g_hooks.describe(site) : std::string();
}
}  // namespace nuvec
