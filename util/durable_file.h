// Replacing a small file so that a crash leaves the old contents or the new, never a mix, and a
// file reported written survives the crash: write a temporary beside it, fsync, rename over the
// old one, fsync the folder (without that last step the rename itself may be lost).
//
// These files hold state (lock owners, mounts, monitored hosts, password hashes): the temporary
// gets a random name, is created with O_EXCL|O_NOFOLLOW (a planted file or symlink in the folder
// is never written through) and mode 0600 minus the process's umask; the service's umask is
// never changed.
#pragma once

#include <string>
#include <string_view>

namespace nasd::util {

// False and *error (what failed, with errno's text) when any step fails; the temporary is
// removed then, and the old file is left as it was unless the rename had already happened.
bool write_file_durably(const std::string& path, std::string_view data, std::string* error);

// Creates a new file named `path` + ".tmp." + random hex, O_EXCL|O_NOFOLLOW, mode 0600 (less
// the umask). Returns its descriptor (O_WRONLY, close-on-exec) and its name in *tmp, or -1 and
// *error.
int create_private_temp(const std::string& path, std::string* tmp, std::string* error);

// fsyncs the folder `dir`, making renames and unlinks in it durable. False and *error on failure.
bool sync_directory(const std::string& dir, std::string* error);

}  // namespace nasd::util
