#include "tests/e2e/server_config.h"

#include <sstream>

namespace nasd::e2e {

std::string nasd_config_without_exports(const ServerLayout& l) {
  std::ostringstream c;
  c << "# Written by the nasd e2e harness for one test run.\n"
    << "[node]\n"
    << "name = e2e\n"
    << "data_dir = " << l.data_dir.string() << "\n"
    << "listen = 127.0.0.1\n"
    << "nfs_port = " << l.nfs_port << "\n"
    << "mount_port = " << l.mount_port << "\n"
    << "udp = on\n"
    << "workers = 1\n"
    << "threads = 4\n"
    << "rpcbind = off\n"
    << "admin_socket = nasd.sock\n"
    << "handle_key = handle.key\n"
    << "max_record = 2M\n"
    << "http_port = " << l.http_port << "\n"
    << "\n[nvram]\n"
    << "file = nvram.img\n"
    << "size = 512M\n"  // room for the 100 MiB test without falling back to write-through
    << "mode = process\n"
    << "\n[volume v0]\n"
    << "id = 0\n"
    << "backing = v0.lfs\n"
    << "size = 2G\n"
    << "segment_size = 4M\n"
    << "cache = 64M\n"
    << "atime = off\n";
  return c.str();
}

std::string nasd_config_text(const ServerLayout& l) {
  std::ostringstream c;
  c << nasd_config_without_exports(l) << "\n[export " << kExportPath << "]\n"
    << "volume = v0\n"
    << "clients = 127.0.0.0/8\n"
    << "access = rw\n"
    << "squash = none\n"
    // The raw-RPC clients of the suite send from unreserved ports.
    << "secure = no\n"
    << "anonuid = 65534\n"
    << "anongid = 65534\n"
    // Short, so that the lock tests can wait out the grace period that follows every start.
    << "\n[nlm]\n"
    << "grace_ms = 2500\n"
    // Small, so that the lock tests can fill the status monitor's list in a moment.
    << "max_hosts = 200\n";
  return c.str();
}

std::filesystem::path ganesha_export_dir(const ServerLayout& l) { return l.data_dir / "export"; }

std::string ganesha_config_text(const ServerLayout& l) {
  std::ostringstream c;
  // NLM and RQUOTA are off; their ports are still set so ganesha never reaches for the defaults.
  c << "NFS_CORE_PARAM {\n"
    << "  Bind_addr = 127.0.0.1;\n"
    << "  NFS_Port = " << l.nfs_port << ";\n"
    << "  MNT_Port = " << l.mount_port << ";\n"
    << "  Protocols = 3;\n"
    << "  Enable_NLM = false;\n"
    << "  Enable_RQUOTA = false;\n"
    << "  Mount_Path_Pseudo = true;\n"
    << "}\n"
    << "NFSV4 { Graceless = true; RecoveryRoot = " << (l.data_dir / "recovery").string()
    << "; }\n"
    << "EXPORT {\n"
    << "  Export_Id = 1;\n"
    << "  Path = " << ganesha_export_dir(l).string() << ";\n"
    << "  Pseudo = " << kExportPath << ";\n"
    << "  Access_Type = RW;\n"
    << "  Squash = No_Root_Squash;\n"
    << "  Protocols = 3;\n"
    << "  Transports = TCP, UDP;\n"
    << "  SecType = sys;\n"
    << "  FSAL { Name = VFS; }\n"
    << "}\n"
    << "LOG { Default_Log_Level = EVENT; }\n";
  return c.str();
}

}  // namespace nasd::e2e
