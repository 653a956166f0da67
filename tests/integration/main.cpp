#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

// Integration tests need the throwaway server that scripts/test.sh starts. Without it they
// report "skipped" (77, CTest's SKIP_RETURN_CODE) instead of failing on a missing server.
int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]).starts_with("--list-") || std::string_view(argv[i]).starts_with("-ltc"))
      listing = true;
  if (!listing && std::getenv("CDC_TEST_PORT") == nullptr) {
    std::fputs("skipped: CDC_TEST_PORT is not set; run scripts/test.sh, which starts a throwaway MariaDB\n",
               stderr);
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
