#include "fs/call_identity.h"

namespace nasd::fs {
namespace {
thread_local const CallIdentity* current_identity = nullptr;
}

CallIdentityScope::CallIdentityScope(const CallIdentity* identity) : previous_(current_identity) {
  current_identity = identity;
}

CallIdentityScope::~CallIdentityScope() { current_identity = previous_; }

const CallIdentity* CallIdentityScope::current() { return current_identity; }

}  // namespace nasd::fs
