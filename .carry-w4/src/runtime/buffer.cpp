#include "runtime/buffer.h"

#include "runtime/context.h"
#include "runtime/driver.h"
#include "support/diagnostics.h"

namespace tessel::runtime {

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  context();
  if (bytes == 0) return;
  check(driver().cuMemAlloc(&pointer_, bytes), "cuMemAlloc");
}

DeviceBuffer::~DeviceBuffer() {
  if (pointer_ != 0) driver().cuMemFree(pointer_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : pointer_(other.pointer_), bytes_(other.bytes_) {
  other.pointer_ = 0;
  other.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (pointer_ != 0) driver().cuMemFree(pointer_);
    pointer_ = other.pointer_;
    bytes_ = other.bytes_;
    other.pointer_ = 0;
    other.bytes_ = 0;
  }
  return *this;
}

void DeviceBuffer::upload(const void* host, std::size_t bytes) {
  if (bytes > bytes_) {
    user_error(SourceLocation::unknown(), "upload of ", bytes, " bytes into a buffer of ", bytes_);
  }
  if (bytes == 0) return;
  context();
  check(driver().cuMemcpyHtoD(pointer_, host, bytes), "cuMemcpyHtoD");
}

void DeviceBuffer::download(void* host, std::size_t bytes) const {
  if (bytes > bytes_) {
    user_error(SourceLocation::unknown(), "download of ", bytes, " bytes from a buffer of ", bytes_);
  }
  if (bytes == 0) return;
  context();
  check(driver().cuMemcpyDtoH(host, pointer_, bytes), "cuMemcpyDtoH");
}

void DeviceBuffer::fill_bytes(std::uint8_t value) {
  if (bytes_ == 0) return;
  context();
  check(driver().cuMemsetD8(pointer_, value, bytes_), "cuMemsetD8");
  check(driver().cuCtxSynchronize(), "cuCtxSynchronize");
}

Stream::Stream() {
  context();
  check(driver().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
}

Stream::~Stream() {
  if (stream_ != nullptr) driver().cuStreamDestroy(stream_);
}

void Stream::synchronize() const {
  check(driver().cuStreamSynchronize(stream_), "cuStreamSynchronize (a kernel failed)");
}

}  // namespace tessel::runtime
