// nasd-passwd: sets the management page's admin password (a salted PBKDF2 hash, see password.h).
//   nasd-passwd --random FILE     a new random password: written hashed, printed once on stdout
//   nasd-passwd FILE              reads the new password from the first line of stdin
// The node reads the file at each login: no restart is needed.
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "server/http/password.h"

int main(int argc, char** argv) {
  using namespace nasd::http;
  std::string file;
  bool random = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--random") random = true;
    else if (!a.empty() && a[0] != '-' && file.empty()) file = a;
    else {
      std::fprintf(stderr, "usage: nasd-passwd [--random] FILE\n");
      return 2;
    }
  }
  if (file.empty()) {
    std::fprintf(stderr, "usage: nasd-passwd [--random] FILE\n");
    return 2;
  }
  try {
    std::string password;
    if (random) {
      password = random_password();
    } else if (!std::getline(std::cin, password) || password.size() < 8) {
      std::fprintf(stderr, "nasd-passwd: give a password of at least 8 characters on stdin\n");
      return 2;
    }
    store_password_file(file, PasswordHash::make("admin", password));
    if (random) std::printf("%s\n", password.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nasd-passwd: %s\n", e.what());
    return 1;
  }
  return 0;
}
