// SPDX-License-Identifier: MIT
/*
 * replay.c - a plain main() that runs a libFuzzer harness over every file
 * named on the command line (directories are read one level deep), so the
 * corpus is replayed under gcc's ASan and UBSan without libFuzzer.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;
	int ret = -1;

	if (!f)
		goto cleanup;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		goto cleanup;
	/* An exact-size heap copy, so ASan sees any read past the input. */
	buf = malloc(n ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		goto cleanup;
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	ret = 0;
cleanup:
	free(buf);
	if (f)
		fclose(f);
	if (ret)
		fprintf(stderr, "replay: cannot read %s\n", path);
	return ret;
}

static int replay_dir(const char *dir, long *count)
{
	struct dirent **names = NULL;
	int n = scandir(dir, &names, NULL, alphasort), i, err = 0;

	if (n < 0) {
		fprintf(stderr, "replay: cannot list %s\n", dir);
		return -1;
	}
	for (i = 0; i < n; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (!stat(path, &st) && S_ISREG(st.st_mode)) {
			err |= replay_file(path);
			(*count)++;
		}
		free(names[i]);
	}
	free(names);
	return err;
}

int main(int argc, char **argv)
{
	long count = 0;
	int i, err = 0;

	for (i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st)) {
			fprintf(stderr, "replay: cannot stat %s\n", argv[i]);
			err = 1;
		} else if (S_ISDIR(st.st_mode)) {
			err |= replay_dir(argv[i], &count) ? 1 : 0;
		} else {
			err |= replay_file(argv[i]) ? 1 : 0;
			count++;
		}
	}
	printf("replayed %ld inputs\n", count);
	return err;
}
