// Stands in for libcommlens.so in `commlens run` tests: loadable everywhere, does nothing.
extern "C" int commlens_test_preload_marker() {
  return 0;
}
