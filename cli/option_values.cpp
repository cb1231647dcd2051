#include "cli/option_values.hpp"

#include <string>

namespace swr::cli {

void refuse_empty_option_values(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (option->get_type_size() == 0) continue;  // a flag takes no value
    const std::string allowed = option->get_type_name();
    option->check(CLI::Validator(
        [allowed](std::string& value) -> std::string {
          if (!value.empty()) return {};
          return "empty value; allowed " + (allowed.empty() ? std::string("a value") : allowed) +
                 " as `--help` describes, or leave the option out for its default";
        },
        "", "non-empty"));
  }
  for (CLI::App* subcommand : app.get_subcommands({})) refuse_empty_option_values(*subcommand);
}

}  // namespace swr::cli
