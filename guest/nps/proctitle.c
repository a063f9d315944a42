// SPDX-License-Identifier: MIT
/*
 * proctitle: a process that rewrites its command line as setproctitle()
 * does, for parity.sh. It overwrites the argv strings and runs on into
 * the environment strings that follow them, so the last argv byte is no
 * longer NUL: the kernel's get_mm_cmdline() then returns the string at
 * arg_start up to its NUL (get_mm_proctitle()), not [arg_start, arg_end[.
 *
 *	gcc -O2 -static -o proctitle proctitle.c
 */
#include <string.h>
#include <unistd.h>

static const char title[] =
	"proctitle: a title longer than the arguments it replaces";

int main(int argc, char **argv, char **envp)
{
	char *start = argv[0];
	char *end = argv[argc - 1] + strlen(argv[argc - 1]);
	size_t n = sizeof(title);
	int i;

	for (i = 0; envp[i]; i++)
		end = envp[i] + strlen(envp[i]);
	if (n > (size_t)(end - start))
		n = end - start;
	memset(start, 0, end - start);
	memcpy(start, title, n);
	for (;;)
		pause();
}
