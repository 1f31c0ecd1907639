#include "tools/lib/run_stderr.h"

#include <unistd.h>

#include <cerrno>

namespace xlac {

LineAtomicBuffer::int_type LineAtomicBuffer::overflow(int_type ch) {
  if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
  pending_.push_back(traits_type::to_char_type(ch));
  if (ch == '\n') Emit(/*all=*/false);
  return ch;
}

std::streamsize LineAtomicBuffer::xsputn(const char* s, std::streamsize n) {
  pending_.append(s, static_cast<size_t>(n));
  if (pending_.find('\n') != std::string::npos) Emit(/*all=*/false);
  return n;
}

int LineAtomicBuffer::sync() {
  Emit();
  return 0;
}

void LineAtomicBuffer::Emit(bool all) {
  size_t end = all ? pending_.size() : pending_.rfind('\n') + 1;
  size_t done = 0;
  while (done < end) {
    ssize_t n = ::write(fd_, pending_.data() + done, end - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // stderr closed: nothing more can be reported
    done += static_cast<size_t>(n);
  }
  pending_.erase(0, end);
}

}  // namespace xlac
