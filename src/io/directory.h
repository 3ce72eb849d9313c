// Directories changed so that a crash leaves the old state or the new one: syncing a directory
// after a rename, putting a complete temporary directory in place, taking one out before deleting
// it. Temporary names carry kTempMarker, so that whoever comes next can recognise and remove them.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace transduce::io {

// Names containing this are temporary: never a checkpoint or a model snapshot.
inline constexpr std::string_view kTempMarker = ".tmp-";

// Makes renames and creations inside `dir` durable. Filesystems that cannot fsync a directory
// (EINVAL, ENOTSUP) are tolerated.
void sync_directory(const std::filesystem::path& dir);

// Creates `dir` and its parents if needed; fails naming it when it cannot, or when it exists as
// something else.
void make_directory(const std::filesystem::path& dir);

// Renames `from` to `to`, failing with one line that names both.
void rename_or_fail(const std::filesystem::path& from, const std::filesystem::path& to);

// Puts the complete temporary directory `tmp` in place as `final_dir`, replacing an existing one
// atomically (RENAME_EXCHANGE) where the filesystem allows, else by moving the old one aside under
// a temporary name first.
void install_directory(const std::filesystem::path& tmp, const std::filesystem::path& final_dir);

// Moves `dir` aside under a temporary name with one rename, then deletes it: a crash midway leaves
// a temporary directory, never a half-deleted one. Failures are warnings (they cost disk space, not
// correctness).
void delete_directory(const std::filesystem::path& dir);

// The whole of a file, its bytes as they are; `what` names it in errors ("the training state").
std::string read_whole_file(const std::string& path, std::string_view what);

}  // namespace transduce::io
