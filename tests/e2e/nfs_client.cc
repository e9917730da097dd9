#include "tests/e2e/nfs_client.h"

#include <fcntl.h>

#include <stdexcept>

namespace nasd::e2e {

NfsClient::NfsClient(const std::string& url, uint32_t uid, uint32_t gid) {
  nfs_ = nfs_init_context();
  if (!nfs_) throw std::runtime_error("nfs_init_context failed");
  nfs_set_uid(nfs_, static_cast<int>(uid));
  nfs_set_gid(nfs_, static_cast<int>(gid));
  nfs_set_timeout(nfs_, 15000);   // a hung server fails the test instead of hanging it
  nfs_set_autoreconnect(nfs_, 0);  // a dead server is an error, not something to paper over
  nfs_url* u = nfs_parse_url_dir(nfs_, url.c_str());
  if (!u) {
    std::string err = nfs_get_error(nfs_);
    nfs_destroy_context(nfs_);
    throw std::runtime_error("bad URL " + url + ": " + err);
  }
  int rc = nfs_mount(nfs_, u->server, u->path);
  nfs_destroy_url(u);
  if (rc != 0) {
    std::string err = nfs_get_error(nfs_);
    nfs_destroy_context(nfs_);
    throw std::runtime_error("mount " + url + ": " + err);
  }
}

NfsClient::~NfsClient() {
  if (nfs_) nfs_destroy_context(nfs_);
}

int NfsClient::write_file(const std::string& path, const std::string& data, int mode) {
  nfsfh* fh = nullptr;
  int rc = nfs_open2(nfs_, path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, mode, &fh);
  if (rc != 0) return rc;
  size_t done = 0;
  while (done < data.size()) {
    int n = nfs_pwrite(nfs_, fh, done, data.size() - done, data.data() + done);
    if (n <= 0) {
      nfs_close(nfs_, fh);
      return n < 0 ? n : -EIO;
    }
    done += static_cast<size_t>(n);
  }
  return nfs_close(nfs_, fh);
}

int NfsClient::read_file(const std::string& path, std::string* data) {
  nfs_stat_64 st{};
  int rc = nfs_stat64(nfs_, path.c_str(), &st);
  if (rc != 0) return rc;
  nfsfh* fh = nullptr;
  rc = nfs_open(nfs_, path.c_str(), O_RDONLY, &fh);
  if (rc != 0) return rc;
  data->assign(st.nfs_size, '\0');
  size_t done = 0;
  while (done < data->size()) {
    int n = nfs_pread(nfs_, fh, done, data->size() - done, data->data() + done);
    if (n < 0) {
      nfs_close(nfs_, fh);
      return n;
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  data->resize(done);
  return nfs_close(nfs_, fh);
}

int NfsClient::list(const std::string& path, std::vector<std::string>* names) {
  nfsdir* dir = nullptr;
  int rc = nfs_opendir(nfs_, path.c_str(), &dir);
  if (rc != 0) return rc;
  while (nfsdirent* e = nfs_readdir(nfs_, dir)) {
    std::string n = e->name;
    if (n != "." && n != "..") names->push_back(n);
  }
  nfs_closedir(nfs_, dir);
  return 0;
}

}  // namespace nasd::e2e
