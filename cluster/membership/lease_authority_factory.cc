#include "cluster/membership/lease_authority_factory.h"

#include <filesystem>
#include <stdexcept>

#include "cluster/membership/file_lease_authority.h"

namespace nasd::membership {

const char* authority_kind_name(AuthorityOptions::Kind kind) {
  return kind == AuthorityOptions::Kind::Etcd ? "etcd" : "file";
}

// This build has the file authority only; the etcd authority (EtcdLeaseAuthority) plugs in here.
std::shared_ptr<LeaseAuthority> make_lease_authority(const AuthorityOptions& options) {
  switch (options.kind) {
    case AuthorityOptions::Kind::File: {
      if (options.lease_dir.empty())
        throw std::invalid_argument("the file lease authority needs a folder");
      std::filesystem::create_directories(options.lease_dir);
      return std::make_shared<FileLeaseAuthority>(options.lease_dir);
    }
    case AuthorityOptions::Kind::Etcd:
      throw std::invalid_argument("this build has no etcd lease authority (authority = etcd)");
  }
  throw std::invalid_argument("unknown lease authority");
}

}  // namespace nasd::membership
