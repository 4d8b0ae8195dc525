// Device memory owned by RAII, and a device stream.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessel::runtime {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);  // uninitialized device memory (cuMemAlloc)
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  CUdeviceptr ptr() const { return pointer_; }
  std::size_t bytes() const { return bytes_; }

  // Synchronous copies; `bytes` must not exceed the buffer (a UserError otherwise).
  void upload(const void* host, std::size_t bytes);
  void download(void* host, std::size_t bytes) const;
  // Sets every byte, e.g. to poison an output before a kernel writes it.
  void fill_bytes(std::uint8_t value);

  template <typename T>
  static DeviceBuffer from_host(const std::vector<T>& values) {
    DeviceBuffer buffer(values.size() * sizeof(T));
    buffer.upload(values.data(), values.size() * sizeof(T));
    return buffer;
  }
  template <typename T>
  std::vector<T> to_host() const {
    std::vector<T> values(bytes_ / sizeof(T));
    download(values.data(), values.size() * sizeof(T));
    return values;
  }

 private:
  CUdeviceptr pointer_ = 0;
  std::size_t bytes_ = 0;
};

// An owned non-blocking stream.
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  CUstream handle() const { return stream_; }
  void synchronize() const;

 private:
  CUstream stream_ = nullptr;
};

}  // namespace tessel::runtime
