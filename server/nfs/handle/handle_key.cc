#include "server/nfs/handle/handle_key.h"

#include "util/secret_key.h"

namespace nasd::nfs {

// The handle key is one of the project's secret-key files: same creation, race and crash rules
// (util/secret_key.h), with the handle key's sizes.
static_assert(kHandleKeyBytes == kSecretKeyBytes && kMinHandleKeyBytes == kMinSecretKeyBytes);

std::vector<uint8_t> load_or_create_handle_key(const std::string& path) {
  return load_or_create_secret_key(path, "handle key");
}

}  // namespace nasd::nfs
