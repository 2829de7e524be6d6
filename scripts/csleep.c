/*
 * csleep: the floor of what waking costs on a host. It sleeps N times for S
 * seconds and prints the CPU it used per wake (process start included,
 * amortised). scripts/agent-nvml-costs.sh compares it with a Go ticker.
 *
 *   gcc -O2 -static -o dist/csleep scripts/csleep.c && dist/csleep 60 1
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
	if (argc != 3 || atoi(argv[1]) <= 0 || atoi(argv[2]) < 0) {
		fprintf(stderr, "usage: csleep WAKES SECONDS\n");
		return 2;
	}
	int n = atoi(argv[1]);
	struct timespec ts = {atoi(argv[2]), 0}, cpu;
	for (int i = 0; i < n; i++)
		nanosleep(&ts, NULL);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	printf("C sleeper: %d wakes, %.1f us CPU per wake\n", n, (cpu.tv_sec * 1e9 + cpu.tv_nsec) / 1e3 / n);
	return 0;
}
