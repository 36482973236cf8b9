// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm-wakeprobe: what waking a thread costs on this host, on one CPU and
 * across two; it decides which placement of a node's threads takes frames
 * fastest (docs/bench.md, "Another host, 2026-11-27": 10-15 against 86-98
 * us a round trip on one host, 22 against 26-28 on another).
 *   netvm-wakeprobe [ROUND_TRIPS]
 * Two processes pass one byte back and forth over a socketpair, as two
 * nodes' QEMUs pass frames over their link: first both pinned to the first
 * CPU this process may use, then to the first two, then to the first two
 * with a SCHED_IDLE busy loop on the second (as a spinning vCPU keeps it;
 * the woken process preempts the loop at once, so what it adds is the
 * wake-up's delivery to a busy CPU).  Prints
 *   same_cpu_us X
 *   cross_cpu_us Y        ("-" where only one CPU may be used)
 *   cross_busy_us Z       ("-" likewise)
 * each the mean of ROUND_TRIPS round trips (default 5000, at most
 * 10000000).  Exit 2: a bad argument; 1: a system call failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_ROUND_TRIPS 5000
#define MAX_ROUND_TRIPS 10000000L

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return sched_setaffinity(0, sizeof(s), &s);
}

/* One byte over fd and back: -1 if the other end failed or left. */
static int bounce(int fd, int first)
{
	char c = 'w';

	if (first && write(fd, &c, 1) != 1)
		return -1;
	if (read(fd, &c, 1) != 1)
		return -1;
	if (!first && write(fd, &c, 1) != 1)
		return -1;
	return 0;
}

/* The mean round trip in us between processes on CPUs a and b; < 0 on
 * failure (errno set, or 0 if the other process failed). */
static double probe(int a, int b, long n)
{
	int sv[2], status;
	double t0, t;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(sv[0]);
		if (pin(b) < 0)
			_exit(1);
		for (long i = 0; i < n; i++)
			if (bounce(sv[1], 0) < 0)
				_exit(1);
		_exit(0);
	}
	close(sv[1]);
	t = -1;
	if (pin(a) == 0) {
		long i;

		t0 = now_us();
		for (i = 0; i < n && bounce(sv[0], 1) == 0; i++)
			;
		if (i == n)
			t = (now_us() - t0) / n;
	}
	close(sv[0]);
	if (t < 0)
		kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		if (t >= 0)
			errno = 0;
		return -1;
	}
	return t;
}

/* A SCHED_IDLE busy loop on cpu, killed with its parent; its pid or -1. */
static pid_t busy_loop(int cpu)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct sched_param p = { 0 };

		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || pin(cpu) < 0 ||
		    sched_setscheduler(0, SCHED_IDLE, &p) < 0)
			_exit(1);
		for (;;)
			;
	}
	return pid;
}

int main(int argc, char **argv)
{
	long n = DEFAULT_ROUND_TRIPS;
	int cpus[2], ncpu = 0;
	cpu_set_t allowed;
	double same, cross, busy;
	pid_t loop;
	char *end;

	if (argc > 2) {
		fprintf(stderr, "usage: netvm-wakeprobe [ROUND_TRIPS]\n");
		return 2;
	}
	if (argc == 2) {
		errno = 0;
		n = strtol(argv[1], &end, 10);
		if (errno || *end || end == argv[1] || n < 1 || n > MAX_ROUND_TRIPS) {
			fprintf(stderr, "netvm-wakeprobe: ROUND_TRIPS must be 1 to %ld, not %s\n",
				MAX_ROUND_TRIPS, argv[1]);
			return 2;
		}
	}
	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0) {
		perror("netvm-wakeprobe: sched_getaffinity");
		return 1;
	}
	for (int c = 0; c < CPU_SETSIZE && ncpu < 2; c++)
		if (CPU_ISSET(c, &allowed))
			cpus[ncpu++] = c;
	same = probe(cpus[0], cpus[0], n);
	if (same < 0) {
		fprintf(stderr, "netvm-wakeprobe: on CPU %d: %s\n", cpus[0],
			errno ? strerror(errno) : "the other process failed");
		return 1;
	}
	printf("same_cpu_us %.1f\n", same);
	if (ncpu < 2) {
		printf("cross_cpu_us -\ncross_busy_us -\n");
		return 0;
	}
	cross = probe(cpus[0], cpus[1], n);
	if (cross < 0) {
		fprintf(stderr, "netvm-wakeprobe: on CPUs %d and %d: %s\n", cpus[0], cpus[1],
			errno ? strerror(errno) : "the other process failed");
		return 1;
	}
	printf("cross_cpu_us %.1f\n", cross);
	loop = busy_loop(cpus[1]);
	if (loop < 0) {
		perror("netvm-wakeprobe: fork");
		return 1;
	}
	usleep(1000);
	if (waitpid(loop, NULL, WNOHANG) != 0) {
		fprintf(stderr, "netvm-wakeprobe: the busy loop on CPU %d did not start\n", cpus[1]);
		return 1;
	}
	busy = probe(cpus[0], cpus[1], n);
	kill(loop, SIGKILL);
	waitpid(loop, NULL, 0);
	if (busy < 0) {
		fprintf(stderr, "netvm-wakeprobe: on CPUs %d and %d, %d busy: %s\n", cpus[0],
			cpus[1], cpus[1], errno ? strerror(errno) : "the other process failed");
		return 1;
	}
	printf("cross_busy_us %.1f\n", busy);
	return 0;
}
