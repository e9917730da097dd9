#include "server/admin/command_registry.h"

#include <algorithm>
#include <exception>
#include <stdexcept>

namespace nasd::admin {

CommandRegistry::CommandRegistry() {
  add_command("help", "list the commands", [this](const std::vector<std::string>&) {
    return help_text();
  });
}

void CommandRegistry::add_command(std::string name, std::string help, Handler handler) {
  if (name.empty() || name.find_first_of(" \t\n") != std::string::npos)
    throw std::invalid_argument("admin command name must be one non-empty word");
  std::lock_guard lock(mu_);
  if (!commands_.emplace(name, Command{std::move(help), std::move(handler)}).second)
    throw std::invalid_argument("admin command '" + name + "' registered twice");
}

CommandRegistry::Result CommandRegistry::run(const std::vector<std::string>& words) const {
  if (words.empty()) return {false, "no command given; try 'help'\n"};
  Handler handler;
  {
    std::lock_guard lock(mu_);
    auto it = commands_.find(words[0]);
    if (it == commands_.end()) return {false, "unknown command '" + words[0] + "'; try 'help'\n"};
    handler = it->second.handler;  // run outside the lock: a command may take a while
  }
  try {
    std::string text = handler(std::vector<std::string>(words.begin() + 1, words.end()));
    if (!text.empty() && text.back() != '\n') text += '\n';
    return {true, std::move(text)};
  } catch (const std::exception& e) {
    return {false, words[0] + ": " + e.what() + "\n"};
  } catch (...) {
    return {false, words[0] + ": failed\n"};
  }
}

bool CommandRegistry::has(const std::string& name) const {
  std::lock_guard lock(mu_);
  return commands_.count(name) > 0;
}

std::string CommandRegistry::help_text() const {
  std::lock_guard lock(mu_);
  size_t width = 0;
  for (const auto& [name, cmd] : commands_) width = std::max(width, name.size());
  std::string out;
  for (const auto& [name, cmd] : commands_)
    out += name + std::string(width - name.size() + 2, ' ') + cmd.help + "\n";
  return out;
}

}  // namespace nasd::admin
