// Writing a file so that readers (and a crash) see either the old content or the new, never a
// mix: write a temporary file next to it, fsync it, rename it over the target, fsync the directory.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <string_view>

namespace transduce::io {

// Replaces `path` with what `write` puts into the stream it is given. `write` may use fwrite,
// fprintf, ...: the stream's error flag, the flush, fsync and close are all checked afterwards.
// The temporary file is `path` + ".tmp.<pid>.<n>" in the same directory. On any failure (including
// `write` throwing) the temporary file is removed and `path` is left as it was; an exception from
// `write` is rethrown as is, other failures throw transduce::Error naming `path` and the reason.
// If `path` is a symbolic link, the link itself is replaced.
void write_file_atomically(const std::string& path, const std::function<void(std::FILE*)>& write);

// Convenience: replaces `path` with exactly `bytes`.
void write_file_atomically(const std::string& path, std::string_view bytes);

// Replaces `to` with a copy of the file `from` (read whole; an unreadable `from` is an Error
// naming it).
void copy_file_atomically(const std::string& from, const std::string& to);

}  // namespace transduce::io
