/*
 * clock.c - the model's one clock: CLOCK_MONOTONIC in nanoseconds, for every
 * file that times something (the data loop, the wire, sources, latency, PTP).
 * A file of its own so that timing a thing ties a file to no other.
 */
#include <time.h>

#include "model.h"

uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
