//===- ToolLibraries.h - Runtime libraries next to the tools ----*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// linattn-run and linattn-compile load or link runtime libraries: linattn's GPU
// runtimes, MLIR's C runner utilities (or linattn's memrefCopy where those
// are missing), the OpenMP runtime. Each is looked for
// first in the `lib` directory beside the tool's `bin` (the build tree, an
// installed tree, or the relocatable bundle of bench/gpu/README.md), then at
// the path found when the tool was configured.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_TOOLS_TOOLLIBRARIES_H
#define LINATTN_TOOLS_TOOLLIBRARIES_H

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <optional>
#include <string>

namespace linattn_tools {

/// `<directory of the running executable>/../lib`.
inline std::string toolLibraryDir(const char *argv0) {
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&toolLibraryDir));
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(exe));
  llvm::sys::path::append(dir, "..", "lib");
  return std::string(dir);
}

/// The library `configured` names: its file name in `libDir` when a file is
/// there, else `configured` itself when it exists, else nothing.
inline std::optional<std::string> findToolLibrary(llvm::StringRef libDir,
                                                  llvm::StringRef configured) {
  llvm::SmallString<256> beside(libDir);
  llvm::sys::path::append(beside, llvm::sys::path::filename(configured));
  if (llvm::sys::fs::exists(beside))
    return std::string(beside);
  if (llvm::sys::fs::exists(configured))
    return configured.str();
  return std::nullopt;
}

/// The C runner utilities lowered code may call: MLIR's (`mlir`, beside the
/// tool or where configured), else linattn's (`own`: memrefCopy alone, for
/// the relocatable bundle, where there is no libMLIR.so for MLIR's).
inline std::optional<std::string> findRunnerUtils(llvm::StringRef libDir,
                                                  llvm::StringRef mlir,
                                                  llvm::StringRef own) {
  if (std::optional<std::string> lib = findToolLibrary(libDir, mlir))
    return lib;
  return findToolLibrary(libDir, own);
}

} // namespace linattn_tools

#endif // LINATTN_TOOLS_TOOLLIBRARIES_H
