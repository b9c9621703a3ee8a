/* Multi-threaded memory read bandwidth, for the roofline of utils/bench/llm.py.
 *
 *     cc -O3 -march=native -fopenmp utils/bench/membw.c -o membw
 *     membw [--threads T] [--mib M] [--repeat R]
 *
 * Allocates M MiB (default 1024, far larger than any cache), has each of T threads
 * (default: all CPUs) write its own contiguous part first (so its pages are local to
 * it), then times R passes (default 10) in which every thread reads its part once with
 * wide vector loads (the sum of 64-bit words in eight independent accumulators, which
 * the compiler vectorizes; integer addition needs no -ffast-math), and prints one JSON
 * line: the best and the median pass in GB/s (10^9 bytes per second) of bytes read.
 * The sum is printed too, so the compiler cannot drop the loads. This is the ceiling a
 * matrix-vector product that streams its weights once can reach; numpy's copy is not
 * (it also writes, and runs on one thread).
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The sum of n 64-bit words (n a multiple of 64), eight accumulators of eight words. */
static uint64_t read_sum(const uint64_t *restrict p, size_t n) {
    uint64_t acc[64] = {0};
    for (size_t i = 0; i < n; i += 64)
        for (int j = 0; j < 64; j++) acc[j] += p[i + j];
    uint64_t s = 0;
    for (int j = 0; j < 64; j++) s += acc[j];
    return s;
}

int main(int argc, char **argv) {
    int threads = omp_get_num_procs();
    long mib = 1024;
    int repeat = 10;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--mib") && i + 1 < argc) mib = atol(argv[++i]);
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: membw [--threads T] [--mib M] [--repeat R]\n");
            return 2;
        }
    }
    if (threads < 1 || mib < 1 || repeat < 1 || repeat > 1000) {
        fprintf(stderr, "membw: --threads, --mib and --repeat must be positive (repeat at most 1000)\n");
        return 2;
    }
    size_t words = (size_t)mib * 1024 * 1024 / 8;
    size_t per = words / threads / 64 * 64; /* each thread's part, whole groups of 64 words */
    words = per * threads;
    uint64_t *buf = aligned_alloc(4096, words * 8);
    if (!buf) {
        fprintf(stderr, "membw: cannot allocate %ld MiB\n", mib);
        return 1;
    }
    omp_set_num_threads(threads);
#pragma omp parallel
    {
        int t = omp_get_thread_num();
        for (size_t i = 0; i < per; i++) buf[t * per + i] = i * 2654435761u + t;
    }
    double secs[1000];
    uint64_t total = 0;
    for (int r = 0; r < repeat; r++) {
        uint64_t sum = 0;
        double t0 = now();
#pragma omp parallel reduction(+ : sum)
        sum += read_sum(buf + omp_get_thread_num() * per, per);
        secs[r] = now() - t0;
        total += sum;
    }
    qsort(secs, repeat, sizeof secs[0], cmp);
    double bytes = (double)words * 8;
    printf("{\"threads\": %d, \"mib\": %ld, \"repeat\": %d, \"best_gbs\": %.3f, \"median_gbs\": %.3f, "
           "\"checksum\": %llu}\n",
           threads, mib, repeat, bytes / secs[0] / 1e9, bytes / secs[repeat / 2] / 1e9,
           (unsigned long long)total);
    free(buf);
    return 0;
}
