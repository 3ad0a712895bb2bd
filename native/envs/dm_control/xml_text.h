// Helpers for the domains whose suite code edits a model file's XML before compiling it (cartpole's
// poles, swimmer's links, lqr's chain): the file's text and Python's float formatting.
#pragma once

#include <charconv>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace pp::dm_control {

inline std::string ReadText(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::invalid_argument("cannot read " + path);
  std::stringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

// Replaces the first `from` in `text`; the suite's files are dm_control 1.0.50's, so a missing
// anchor means another version.
inline void ReplaceFirst(std::string& text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  if (at == std::string::npos) {
    throw std::invalid_argument("the model file is not dm_control 1.0.50's: no '" + from + "' in it");
  }
  text.replace(at, from.size(), to);
}

// Removes every self-closing element that starts with `start` (e.g. `<geom name="wall_px"`), up to
// its "/>": lxml's getparent().remove() of a childless element. Throws if there is none.
inline void RemoveElements(std::string& text, const std::string& start) {
  std::size_t at = text.find(start);
  if (at == std::string::npos) {
    throw std::invalid_argument("the model file is not dm_control 1.0.50's: no '" + start + "' in it");
  }
  for (; at != std::string::npos; at = text.find(start, at)) {
    const std::size_t end = text.find("/>", at);
    if (end == std::string::npos) throw std::invalid_argument("unterminated element '" + start + "'");
    text.erase(at, end + 2 - at);
  }
}

// Removes the element <body name="name" ...>...</body> (nested bodies included) from `xml`, as
// xml_tools.find_element(...).getparent().remove(...) does.
inline void RemoveBody(std::string& xml, const std::string& name) {
  const std::size_t start = xml.find("<body name=\"" + name + "\"");
  if (start == std::string::npos) throw std::invalid_argument("the model file has no body '" + name + "'");
  int depth = 0;
  std::size_t at = start;
  for (;;) {
    const std::size_t open = xml.find("<body", at), close = xml.find("</body>", at);
    if (close == std::string::npos) throw std::invalid_argument("unbalanced <body> in the model file");
    if (open != std::string::npos && open < close) {
      const std::size_t end = xml.find('>', open);
      if (xml[end - 1] != '/') ++depth;  // <body .../> opens and closes at once
      at = end + 1;
    } else {
      at = close + 7;
      if (--depth == 0) break;
    }
  }
  xml.erase(start, at - start);
}

// str(x) of a Python float: the shortest text that reads back as x ("60.0" is written "60": the
// model compiler reads the same number).
inline std::string PyFloat(double x) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof(text), x).ptr;
  return std::string(text, end);
}

}  // namespace pp::dm_control
