// DataRoot: the directory a hosting node resolves a plan's data paths against.
//
// A plan names its data files (npy and text datasets, npy initializers) relative to the job
// file's directory, so it runs on any host that has those files under some directory: the
// node's data root. A path the job wrote absolute stays absolute in the plan (its leading '/'
// is the mark), and so does a path whose '..' climbs above the job's directory; both name files
// of one machine. A node that serves other users' plans confines them (`confined`), refusing
// such paths, so a plan reads nothing outside the root it was given.
#ifndef SOFTWIRE_DATA_DATA_ROOT_H_
#define SOFTWIRE_DATA_DATA_ROOT_H_

#include <string>

#include "base/status.h"

namespace softwire {
namespace data {

struct DataRoot {
  DataRoot() = default;
  // Not explicit: a directory is a data root that is not confined.
  DataRoot(std::string directory) : directory(std::move(directory)) {}  // NOLINT
  DataRoot(const char* directory) : directory(directory) {}             // NOLINT

  // Relative data paths resolve against this directory. Empty: there is none, and a plan with
  // a relative data path cannot run.
  std::string directory;
  // Refuse absolute paths and paths that climb above the root with '..'.
  bool confined = false;
};

// Whether `path` stays inside whatever directory it is resolved against: relative, and no
// '..' climbs above its start (lexically: "a/../b" stays, "../b" and "a/../../b" do not).
bool StaysInDataRoot(const std::string& path);

// The file `path` names under `root`: `path` itself when absolute, else root/path, lexically
// normalised. FailedPrecondition when `path` is relative and `root` has no directory;
// InvalidArgument when `root` is confined and `path` does not stay in it. Errors name `path`
// (callers add the data source or variable); the file itself is not opened.
StatusOr<std::string> ResolveDataPath(const DataRoot& root, const std::string& path);

}  // namespace data
}  // namespace softwire

#endif  // SOFTWIRE_DATA_DATA_ROOT_H_
