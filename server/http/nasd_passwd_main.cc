// nasd-passwd: sets the management page's admin password (a salted PBKDF2 hash, see password.h).
//   nasd-passwd --random FILE     a new random password: written hashed, printed once on stdout
//   nasd-passwd FILE              reads the new password from the first line of stdin
//   nasd-passwd --token FILE      a new read-only scrape token (`[node] http_token_file`):
//                                 written as is (mode 0600), printed once on stdout
// The node reads the files at each login or scrape: no restart is needed.
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "server/http/password.h"
#include "server/http/scrape_token.h"

int main(int argc, char** argv) {
  using namespace nasd::http;
  std::string file;
  bool random = false, token = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--random") random = true;
    else if (a == "--token") token = true;
    else if (!a.empty() && a[0] != '-' && file.empty()) file = a;
    else {
      std::fprintf(stderr, "usage: nasd-passwd [--random | --token] FILE\n");
      return 2;
    }
  }
  if (file.empty() || (random && token)) {
    std::fprintf(stderr, "usage: nasd-passwd [--random | --token] FILE\n");
    return 2;
  }
  try {
    if (token) {
      std::printf("%s\n", store_new_token_file(file).c_str());
      return 0;
    }
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
