// libpcap's side of bench/filter.js: compiles the expression with pcap_compile (optimiser
// on, as tcpdump does), loads every frame of a pcap file into memory, then runs
// pcap_offline_filter (libpcap's BPF interpreter) over them `reps` times per round and
// prints, per round, the nanoseconds per frame and the number of frames kept per pass.
//
// usage: filter-libpcap FILE ROUNDS REPS EXPRESSION
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s FILE ROUNDS REPS EXPRESSION\n", argv[0]);
    return 2;
  }
  char err[PCAP_ERRBUF_SIZE];
  pcap_t *p = pcap_open_offline(argv[1], err);
  if (p == NULL) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  int rounds = atoi(argv[2]);
  long reps = atol(argv[3]);
  struct bpf_program prog;
  if (pcap_compile(p, &prog, argv[4], 1, PCAP_NETMASK_UNKNOWN) != 0) {
    fprintf(stderr, "%s\n", pcap_geterr(p));
    return 1;
  }
  size_t cap = 1024, n = 0;
  struct pcap_pkthdr *hdrs = malloc(cap * sizeof *hdrs);
  u_char **data = malloc(cap * sizeof *data);
  struct pcap_pkthdr *h;
  const u_char *bytes;
  while (pcap_next_ex(p, &h, &bytes) == 1) {
    if (n == cap) {
      cap *= 2;
      hdrs = realloc(hdrs, cap * sizeof *hdrs);
      data = realloc(data, cap * sizeof *data);
    }
    hdrs[n] = *h;
    data[n] = malloc(2048); // a pool-sized buffer per frame, as the driver has
    memcpy(data[n], bytes, h->caplen);
    n++;
  }
  for (int r = 0; r < rounds; r++) {
    long kept = 0;
    double start = now_ns();
    for (long rep = 0; rep < reps; rep++) {
      for (size_t i = 0; i < n; i++) kept += pcap_offline_filter(&prog, &hdrs[i], data[i]) != 0;
    }
    double ns = (now_ns() - start) / ((double)reps * n);
    printf("%.3f %ld\n", ns, kept / reps);
  }
  pcap_freecode(&prog);
  pcap_close(p);
  return 0;
}
