#pragma once

// A small std::expected look-alike (C++23's is not in our toolchain's C++20 mode). The API
// mirrors std::expected, so switching later is a rename.

#include <cassert>
#include <type_traits>
#include <utility>
#include <variant>

#include "util/error.h"

namespace cdc {

struct Unexpected {
  Error error;
};

[[nodiscard]] inline Unexpected fail(Errc code, std::string message) {
  return Unexpected{Error{code, std::move(message)}};
}
[[nodiscard]] inline Unexpected fail(Error error) { return Unexpected{std::move(error)}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(const T& value) : state_(std::in_place_index<0>, value) {}  // NOLINT: implicit like expected
  Result(T&& value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT
  Result(Unexpected unexpected) : state_(std::in_place_index<1>, std::move(unexpected.error)) {}  // NOLINT

  [[nodiscard]] bool has_value() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & {
    assert(has_value());
    return *std::get_if<0>(&state_);
  }
  const T& value() const& {
    assert(has_value());
    return *std::get_if<0>(&state_);
  }
  T&& value() && {
    assert(has_value());
    return std::move(*std::get_if<0>(&state_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const& {
    assert(!has_value());
    return *std::get_if<1>(&state_);
  }
  Error&& error() && {
    assert(!has_value());
    return std::move(*std::get_if<1>(&state_));
  }

 private:
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Unexpected unexpected) : error_(std::move(unexpected.error)), failed_(true) {}  // NOLINT

  [[nodiscard]] bool has_value() const noexcept { return !failed_; }
  explicit operator bool() const noexcept { return has_value(); }
  void value() const { assert(has_value()); }

  const Error& error() const& {
    assert(failed_);
    return error_;
  }
  Error&& error() && {
    assert(failed_);
    return std::move(error_);
  }

 private:
  Error error_{Errc::internal, {}};
  bool failed_ = false;
};

}  // namespace cdc
