// The named commands the control socket offers. Each room adds its own (`stats`, volume or
// NVRAM inspection, ...) without the socket knowing about any of them. A command takes the
// words after its name and returns the text to print; throwing reports an error to the caller.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace nasd::admin {

class CommandRegistry {
 public:
  using Handler = std::function<std::string(const std::vector<std::string>& args)>;

  struct Result {
    bool ok = false;
    std::string text;
  };

  CommandRegistry();

  // Thread-safe; may be called while the control socket is serving. Throws
  // std::invalid_argument for an empty or duplicate name.
  void add_command(std::string name, std::string help, Handler handler);

  // Runs words[0] with words[1..] as its arguments. Unknown commands, empty input and
  // handler exceptions come back as !ok with a message; nothing escapes.
  Result run(const std::vector<std::string>& words) const;

  // Whether `name` is registered (callers that offer a command only where the node has it).
  bool has(const std::string& name) const;

  // One line per command: name and help, sorted by name.
  std::string help_text() const;

 private:
  struct Command {
    std::string help;
    Handler handler;
  };
  mutable std::mutex mu_;
  std::map<std::string, Command> commands_;
};

}  // namespace nasd::admin
