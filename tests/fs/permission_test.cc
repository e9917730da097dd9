// The shared permission helper.
#include <gtest/gtest.h>

#include "fs/permission.h"

namespace nasd::fs {
namespace {

Cred cred(uint32_t uid, uint32_t gid, std::vector<uint32_t> gids = {}) {
  Cred c;
  c.uid = uid;
  c.gid = gid;
  c.gids = std::move(gids);
  return c;
}

TEST(Permission, OwnerGroupOtherTriplets) {
  Subject f{FileType::Reg, 0640, 10, 20};
  EXPECT_TRUE(may(cred(10, 99), f, kWantRead | kWantWrite));
  EXPECT_FALSE(may(cred(10, 99), f, kWantExec));
  EXPECT_TRUE(may(cred(11, 20), f, kWantRead));
  EXPECT_FALSE(may(cred(11, 20), f, kWantWrite));
  EXPECT_TRUE(may(cred(11, 5, {7, 20}), f, kWantRead));  // supplementary group
  EXPECT_FALSE(may(cred(11, 5, {7}), f, kWantRead));
  // The owner triplet applies to the owner even when "other" would allow more.
  Subject odd{FileType::Reg, 0007, 10, 20};
  EXPECT_FALSE(may(cred(10, 20), odd, kWantRead));
  EXPECT_TRUE(may(cred(12, 21), odd, kWantRead));
}

TEST(Permission, RootBypassExceptExecute) {
  Subject f{FileType::Reg, 0000, 10, 20};
  EXPECT_TRUE(may(cred(0, 0), f, kWantRead | kWantWrite));
  EXPECT_FALSE(may(cred(0, 0), f, kWantExec));
  f.mode = 0010;
  EXPECT_TRUE(may(cred(0, 0), f, kWantExec));
  Subject d{FileType::Dir, 0000, 10, 20};
  EXPECT_TRUE(may(cred(0, 0), d, kWantExec));
}

TEST(Permission, AccessMatchesEnforcement) {
  Subject d{FileType::Dir, 0750, 10, 20};
  uint32_t all = kAccessRead | kAccessLookup | kAccessModify | kAccessExtend | kAccessDelete |
                 kAccessExecute;
  EXPECT_EQ(access_granted(cred(10, 1), d, all),
            uint32_t(kAccessRead | kAccessLookup | kAccessModify | kAccessExtend | kAccessDelete));
  EXPECT_EQ(access_granted(cred(11, 20), d, all), uint32_t(kAccessRead | kAccessLookup));
  EXPECT_EQ(access_granted(cred(11, 21), d, all), 0u);
  Subject f{FileType::Reg, 0755, 10, 20};
  EXPECT_EQ(access_granted(cred(11, 21), f, all), uint32_t(kAccessRead | kAccessExecute));
  EXPECT_EQ(access_granted(cred(11, 21), f, kAccessRead), uint32_t(kAccessRead));
}

TEST(Permission, StickyDirectoryDeletion) {
  Subject d{FileType::Dir, 01777, 10, 20};
  EXPECT_TRUE(may_delete(cred(30, 30), d, 30));   // own file
  EXPECT_FALSE(may_delete(cred(30, 30), d, 31));  // someone else's
  EXPECT_TRUE(may_delete(cred(10, 30), d, 31));   // directory owner
  EXPECT_TRUE(may_delete(cred(0, 0), d, 31));
  Subject ro{FileType::Dir, 0755, 10, 20};
  EXPECT_FALSE(may_delete(cred(30, 30), ro, 30));
}

TEST(Permission, SetattrRules) {
  Subject f{FileType::Reg, 06755, 10, 20};
  uint32_t mode;
  SetAttr chmod;
  chmod.mode = 0600;
  EXPECT_EQ(check_setattr(cred(11, 20), f, chmod, &mode), Status::Perm);
  EXPECT_EQ(check_setattr(cred(10, 20), f, chmod, &mode), Status::Ok);
  EXPECT_EQ(mode, 0600u);
  SetAttr chown;
  chown.uid = 11;
  EXPECT_EQ(check_setattr(cred(10, 20), f, chown, &mode), Status::Perm);
  EXPECT_EQ(check_setattr(cred(0, 0), f, chown, &mode), Status::Ok);
  EXPECT_EQ(mode, 06755u);  // root keeps setuid/setgid
  SetAttr chgrp;
  chgrp.gid = 30;
  EXPECT_EQ(check_setattr(cred(10, 20), f, chgrp, &mode), Status::Perm);
  EXPECT_EQ(check_setattr(cred(10, 20, {30}), f, chgrp, &mode), Status::Ok);
  EXPECT_EQ(mode, 0755u);  // chgrp by the owner clears setuid/setgid
  SetAttr setgid;
  setgid.mode = 02755;
  EXPECT_EQ(check_setattr(cred(10, 99), f, setgid, &mode), Status::Ok);
  EXPECT_EQ(mode, 0755u);  // not a member of the file's group
  SetAttr size;
  size.size = 0;
  Subject ro{FileType::Reg, 0444, 10, 20};
  EXPECT_EQ(check_setattr(cred(10, 20), ro, size, &mode), Status::Access);
  EXPECT_EQ(check_setattr(cred(0, 0), ro, size, &mode), Status::Ok);
  Subject dir{FileType::Dir, 0777, 10, 20};
  EXPECT_EQ(check_setattr(cred(10, 20), dir, size, &mode), Status::IsDir);
  SetAttr touch;
  touch.mtime_how = TimeHow::ServerTime;
  Subject shared{FileType::Reg, 0666, 10, 20};
  EXPECT_EQ(check_setattr(cred(11, 21), shared, touch, &mode), Status::Ok);
  touch.mtime_how = TimeHow::ClientTime;
  EXPECT_EQ(check_setattr(cred(11, 21), shared, touch, &mode), Status::Perm);
}

}  // namespace
}  // namespace nasd::fs
