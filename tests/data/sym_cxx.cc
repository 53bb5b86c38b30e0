// SPDX-License-Identifier: MIT
/*
 * sym_cxx.cc - fixture: C++ names in namespaces and templates, which the
 * symbolizer must demangle exactly.
 */
#include <cstdlib>

volatile unsigned long sink;

namespace outer {
namespace inner {

template <typename T> struct Box {
	__attribute__((noinline)) T spin(T n)
	{
		for (T i = 0; i < n; i++)
			sink = sink + static_cast<unsigned long>(i);
		return n;
	}
};

__attribute__((noinline)) int work(int n)
{
	Box<long> b;

	return static_cast<int>(b.spin(n));
}

} // namespace inner
} // namespace outer

int main(int argc, char **argv)
{
	return outer::inner::work(argc > 1 ? std::atoi(argv[1]) : 10);
}
