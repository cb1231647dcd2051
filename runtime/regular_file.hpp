// Files swr reads that a user hands it (manifests, cubins, import sources): regular files only,
// of a bounded size, so that a named pipe, a device or a huge file is refused by name instead of
// hanging the reader or exhausting its memory.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace swr {

// The bytes of `path`, which must be a regular file (after links) of at most `max_bytes`. A named
// pipe, a device (e.g. a link to /dev/zero), a directory or a bigger file is refused with a
// UsageError naming the file, before any byte is read. `what` names the file's role in the
// message ("manifest", "cubin").
std::string read_regular_file(const std::filesystem::path& path, std::size_t max_bytes,
                              std::string_view what);

// A regular file (after links)? "" if so, else why not ("a named pipe, not a regular file", ...).
std::string why_not_regular_file(const std::filesystem::path& path);

}  // namespace swr
