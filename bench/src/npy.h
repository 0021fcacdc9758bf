//===- npy.h - minimal .npy reading and writing for the bench peers -------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Little-endian, C-ordered float32 arrays only: what bench/run.py writes and
// reads back with numpy.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_BENCH_NPY_H
#define LINATTN_BENCH_NPY_H

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace bench {

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

/// Reads a float32 .npy file; returns false and prints why on failure.
inline bool readNpy(const std::string &path, NpyArray &array) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) {
    std::fprintf(stderr, "%s: cannot open\n", path.c_str());
    return false;
  }
  char magic[8];
  bool ok = std::fread(magic, 1, 8, f) == 8 &&
            std::memcmp(magic, "\x93NUMPY", 6) == 0;
  size_t headerLen = 0;
  if (ok && magic[6] == 1) {
    unsigned char len[2];
    ok = std::fread(len, 1, 2, f) == 2;
    headerLen = len[0] | (len[1] << 8);
  } else if (ok) {
    unsigned char len[4];
    ok = std::fread(len, 1, 4, f) == 4;
    headerLen = len[0] | (len[1] << 8) | (len[2] << 16) |
                (static_cast<size_t>(len[3]) << 24);
  }
  std::string header(headerLen, ' ');
  ok = ok && std::fread(&header[0], 1, headerLen, f) == headerLen;
  if (!ok || header.find("'<f4'") == std::string::npos ||
      header.find("'fortran_order': True") != std::string::npos) {
    std::fprintf(stderr, "%s: not a C-ordered float32 .npy file\n",
                 path.c_str());
    std::fclose(f);
    return false;
  }
  size_t open = header.find('(', header.find("'shape'"));
  size_t close = header.find(')', open);
  array.shape.clear();
  int64_t n = 1;
  for (size_t pos = open + 1; pos < close;) {
    size_t comma = header.find(',', pos);
    if (comma == std::string::npos || comma > close)
      comma = close;
    std::string part = header.substr(pos, comma - pos);
    if (part.find_first_of("0123456789") != std::string::npos) {
      array.shape.push_back(std::stoll(part));
      n *= array.shape.back();
    }
    pos = comma + 1;
  }
  array.data.resize(n);
  ok = std::fread(array.data.data(), sizeof(float), n, f) ==
       static_cast<size_t>(n);
  std::fclose(f);
  if (!ok)
    std::fprintf(stderr, "%s: truncated\n", path.c_str());
  return ok;
}

/// Writes a float32 .npy file.
inline bool writeNpy(const std::string &path, const std::vector<int64_t> &shape,
                     const float *data) {
  std::string dims;
  int64_t n = 1;
  for (int64_t d : shape) {
    dims += std::to_string(d) + ", ";
    n *= d;
  }
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return false;
  unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff),
                          static_cast<unsigned char>(header.size() >> 8)};
  bool ok = std::fwrite("\x93NUMPY\x01\x00", 1, 8, f) == 8 &&
            std::fwrite(len, 1, 2, f) == 2 &&
            std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
            std::fwrite(data, sizeof(float), n, f) == static_cast<size_t>(n);
  return std::fclose(f) == 0 && ok;
}

} // namespace bench

#endif // LINATTN_BENCH_NPY_H
