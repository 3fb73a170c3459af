// Errors raised by ops (at the call) and by evaluation, and the call sites nodes remember.
#pragma once
#include <stdexcept>
#include <string>

namespace nuvec {

// An invalid call: raised eagerly by an op. `index` marks axis/index-out-of-range errors,
// which Python also sees as IndexError.
class OpError : public std::invalid_argument {
 public:
  OpError(std::string op, const std::string& reason, bool index = false)
      : std::invalid_argument(op + ": " + reason), op_name(std::move(op)), is_index(index) {}
  std::string op_name;
  bool is_index;
};

// Where a node was recorded: an opaque handle owned by the front end (the Python binding
// keeps a code object and an instruction offset) so the core stays language-free.
struct CallSite {
  void* handle = nullptr;
  int offset = 0;
};

struct CallSiteHooks {
  CallSite (*capture)() = nullptr;              // called when a node is recorded
  void (*release)(CallSite) = nullptr;          // called when the node dies
  std::string (*describe)(CallSite) = nullptr;  // "file.py:12"
  CallSite (*retain)(CallSite) = nullptr;       // another reference to a captured site
};
void set_call_site_hooks(CallSiteHooks hooks);
CallSite capture_call_site();
void release_call_site(CallSite site);
std::string describe_call_site(CallSite site);

// While one lives, nodes recorded on its thread take the site captured when it was made: a
// compiled function's replay records every node at its caller's line, so it captures that line
// once rather than once a node.
class PinnedCallSite {
 public:
  PinnedCallSite();
  ~PinnedCallSite();
  PinnedCallSite(const PinnedCallSite&) = delete;
  PinnedCallSite& operator=(const PinnedCallSite&) = delete;

 private:
  CallSite site_;
  const CallSite* outer_;
};

enum class EvalErrorKind { memory, index, other };

// A failure while evaluating a node: names the op and where its node was recorded.
class EvalError : public std::runtime_error {
 public:
  EvalError(EvalErrorKind kind, std::string op, const std::string& reason, std::string where)
      : std::runtime_error(op + ": " + reason + (where.empty() ? "" : " (node recorded at " + where + ")")),
        kind(kind),
        op_name(std::move(op)),
        reason(reason),
        where(std::move(where)) {}
  EvalErrorKind kind;
  std::string op_name;
  std::string reason;
  std::string where;
};

// Raised by kernels and the allocator; eval turns it into an EvalError naming the node.
class KernelError : public std::runtime_error {
 public:
  KernelError(EvalErrorKind kind, const std::string& reason) : std::runtime_error(reason), kind(kind) {}
  EvalErrorKind kind;
};

}  // namespace nuvec
