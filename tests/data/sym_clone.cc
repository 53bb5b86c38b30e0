// SPDX-License-Identifier: MIT
/*
 * sym_clone.cc - fixture: functions GCC clones at -O2 (.isra.0 for a member
 * that never reads `this`, .constprop.0 for a constant argument) and, with
 * -fPIC -fno-semantic-interposition, global functions that also get a local
 * ".localalias" symbol at the same address, as Debian's python3 has.
 */
#include <cstdlib>
#include <ctime>

volatile unsigned long sink;

/* a call makes its callers non-leaf, so they get a frame pointer (GCC 12
 * omits it in a leaf even with -mno-omit-leaf-frame-pointer) */
__attribute__((noinline)) void flush(long v)
{
	sink = sink + static_cast<unsigned long>(v);
}

namespace outer {
namespace inner {

template <typename T> struct Box {
	__attribute__((noinline)) T spin(T n)
	{
		for (T i = 0; i < n; i++)
			sink = sink + static_cast<unsigned long>(i);
		flush(n);
		return n;
	}
};

/* only ever called with step 3: IPA-CP clones it */
__attribute__((noinline)) static long stride(long n, long step)
{
	for (long i = 0; i < n; i += step)
		sink = sink + static_cast<unsigned long>(i);
	flush(step);
	return n;
}

/* global and called within the file: reached through its local alias (the
 * + 1 keeps the call from becoming a jump, so its frame stays in stacks) */
__attribute__((noinline)) long shared_entry(long n)
{
	return stride(n, 3) + 1;
}

__attribute__((noinline)) int work(int n)
{
	Box<long> b;

	return static_cast<int>(b.spin(n) + shared_entry(n));
}

} // namespace inner
} // namespace outer

/* busy for argv[1] seconds (default 1) */
int main(int argc, char **argv)
{
	time_t end = time(nullptr) + (argc > 1 ? std::atoi(argv[1]) : 1);

	while (time(nullptr) < end)
		if (outer::inner::work(1000) < 0)
			return 1;
	return 0;
}
