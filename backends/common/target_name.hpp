// The target name a plugin reports for a device it knows only by the driver's name (OpenCL, Level
// Zero): the plugin's prefix and that name in lowercase letters, digits and single dashes, within
// yirage_target_properties.name's 63 characters.
#pragma once

#include <cctype>
#include <string>

namespace yirage::backend {

inline std::string target_name(const std::string &prefix, const std::string &device) {
  std::string name = prefix;
  for (char c : device) {
    if (name.size() >= 63) break;
    if (std::isalnum(static_cast<unsigned char>(c))) {
      name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (name.back() != '-') {
      name += '-';
    }
  }
  while (!name.empty() && name.back() == '-') name.pop_back();
  return name;
}

}  // namespace yirage::backend
