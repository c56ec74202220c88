/*
 * line-trip.c - how long a cache line takes to travel from one vCPU to the other.
 *
 * Two threads, pinned to CPU 0 and CPU 1, pass a counter back and forth through
 * one cache line: each waits until the other has written the value it expects,
 * then writes the next one.  A round trip is two one-way trips.  Prints the
 * median over a few bursts of the time of one one-way trip, in ns.
 *
 * Why the bench needs it: a driver and the device model share descriptor and
 * packet lines, so the forwarding rate of both drivers depends on this one
 * number.  On the hosts measured so far it takes two values that change from one
 * minute to the next, depending on whether the host has put the two vCPUs on
 * cores that share a cache (about 40 ns) or not (100-220 ns).  The JS/C ratio
 * differs between the two (bench/LOG.md, eleventh round), so the
 * bench reports it for each (side-by-side.js).
 *
 * Build: gcc -O2 -pthread -o build/line-trip bench/line-trip.c
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BURSTS 5
#define TRIPS 4000 /* round trips per burst: 0.3-2 ms */

static _Alignas(64) volatile uint64_t line;

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof set, &set)) {
		fprintf(stderr, "line-trip: cannot run on CPU %d\n", cpu);
		exit(1);
	}
}

/* Waits for every odd value and answers with the next even one. */
static void *answer(void *unused)
{
	(void)unused;
	pin(1);
	for (uint64_t v = 1; v < 2ull * BURSTS * TRIPS; v += 2) {
		while (line != v)
			;
		line = v + 1;
	}
	return NULL;
}

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(void)
{
	pthread_t other;
	double ns[BURSTS];
	pin(0);
	if (pthread_create(&other, NULL, answer, NULL))
		return 1;
	uint64_t v = 0;
	for (int b = 0; b < BURSTS; b++) {
		double start = now_ns();
		for (int i = 0; i < TRIPS; i++, v += 2) {
			while (line != v)
				;
			line = v + 1;
		}
		while (line != v) /* the last answer */
			;
		ns[b] = (now_ns() - start) / (2.0 * TRIPS);
	}
	pthread_join(other, NULL);
	qsort(ns, BURSTS, sizeof ns[0], by_value);
	printf("%.1f\n", ns[BURSTS / 2]);
	return 0;
}
