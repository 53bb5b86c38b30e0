// SPDX-License-Identifier: MIT
// templates.cc - the C++ program of `make accuracy`: class templates,
// std::sort and std::map instantiated over two types, small functions
// inlined into their callers at -O2 (built with frame pointers by run.sh).
// Runs for the seconds given (default 10), then prints a checksum.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

template <typename T> struct Matrix {
	int n;
	std::vector<T> v;
	explicit Matrix(int n) : n(n), v(n * n) {}
	T &at(int i, int j) { return v[i * n + j]; }
	const T &at(int i, int j) const { return v[i * n + j]; }
};

template <typename T>
__attribute__((noinline)) void multiply(const Matrix<T> &a, const Matrix<T> &b, Matrix<T> &c)
{
	for (int i = 0; i < a.n; i++)
		for (int j = 0; j < a.n; j++) {
			T s = 0;
			for (int k = 0; k < a.n; k++)
				s += a.at(i, k) * b.at(k, j);
			c.at(i, j) = s;
		}
}

template <typename K> K key_of(unsigned x);
template <> int key_of<int>(unsigned x) { return (int)(x % 100003); }
template <> std::string key_of<std::string>(unsigned x) { return std::to_string(x % 100003); }

template <typename K> __attribute__((noinline)) unsigned long count_keys(unsigned seed, int n)
{
	std::map<K, int> m;
	for (int i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		m[key_of<K>(seed >> 8)]++;
	}
	return m.size();
}

template <typename T> __attribute__((noinline)) T sort_sum(unsigned seed, int n)
{
	std::vector<T> v(n);
	for (auto &x : v) {
		seed = seed * 1664525u + 1013904223u;
		x = (T)(seed >> 4);
	}
	std::sort(v.begin(), v.end());
	return v[n / 2];
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(secs);
	Matrix<double> a(96), b(96), c(96);
	Matrix<int> ia(96), ib(96), ic(96);
	for (int i = 0; i < 96 * 96; i++) {
		a.v[i] = b.v[i] = i % 7;
		ia.v[i] = ib.v[i] = i % 5;
	}
	double sum = 0;
	for (unsigned r = 1; std::chrono::steady_clock::now() < end; r++) {
		multiply(a, b, c);
		multiply(ia, ib, ic);
		sum += c.at(1, 2) + ic.at(2, 1);
		sum += (double)count_keys<int>(r, 20000) + (double)count_keys<std::string>(r, 5000);
		sum += sort_sum<double>(r, 20000) + (double)sort_sum<unsigned>(r, 20000);
	}
	printf("templates: checksum %.0f\n", sum);
	return 0;
}
