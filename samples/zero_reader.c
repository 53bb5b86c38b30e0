// SPDX-License-Identifier: MIT
/*
 * Spends its time in the kernel reading /dev/zero (read_zero, clear_user,
 * vfs_read under ksys_read) from main -> sa_zero_reader_loop, for -d seconds.
 */
#include <fcntl.h>
#include <getopt.h>
#include <unistd.h>

#include "sa_sample.h"

#define BUF_SIZE (1 << 20)

static char buf[BUF_SIZE];

__attribute__((noipa)) long long sa_zero_reader_loop(int fd, uint64_t until)
{
	long long bytes = 0;
	ssize_t n;

	while (sa_mono_ns() < until) {
		n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			return -1;
		bytes += n;
	}
	return bytes;
}

int main(int argc, char **argv)
{
	double seconds = 5;
	uint64_t c0, w0;
	long long bytes;
	int opt, fd;

	while ((opt = getopt(argc, argv, "d:h")) != -1) {
		switch (opt) {
		case 'd':
			seconds = sa_parse_double(argv[0], "-d", optarg);
			break;
		default:
			fprintf(opt == 'h' ? stdout : stderr,
				"usage: %s [-d SECONDS]\n"
				"  reads /dev/zero in 1 MiB reads for SECONDS (default 5)\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	fd = open("/dev/zero", O_RDONLY);
	if (fd < 0) {
		perror("/dev/zero");
		return 1;
	}
	c0 = sa_thread_cpu_ns();
	w0 = sa_mono_ns();
	bytes = sa_zero_reader_loop(fd, w0 + (uint64_t)(seconds * 1e9));
	if (bytes < 0) {
		perror("read /dev/zero");
		return 1;
	}
	printf("zero_reader: cpu %.4f s read %.1f MiB throughput %.1f iterations/s (1 MiB reads)\n",
	       (sa_thread_cpu_ns() - c0) / 1e9, bytes / 1048576.0,
	       bytes / 1048576.0 / ((sa_mono_ns() - w0) / 1e9));
	close(fd);
	return 0;
}
