/*
 * run_model.c: runs a function of a relax library from C (docs/library.md).
 *
 *   relax-translate examples/mlp.rlx --emit=lib -o mlp.so
 *   cc examples/c/run_model.c -Ilib/relax-capi/include -Ltarget/release -lrelax_runtime_c -o run_model
 *   LD_LIBRARY_PATH=target/release ./run_model mlp.so main
 *
 * Every parameter of the function gets a deterministic input of the shape and dtype
 * given on the command line (default: the shapes of examples/mlp.rlx's `main`), float32
 * values (i * 37 % 101) / 101 - 0.5; every result tensor is printed as its shape and
 * its values (%.9g), one per line, so two runs (x86-64 and aarch64 under qemu) can be
 * compared.
 *
 *   run_model LIB FUNC [DIMS...]   DIMS: one argument per parameter, like 8x64
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "relax.h"

#define MAX_PARAMS 16
#define MAX_OUTS 16

/* Parses "8x64" into dims; returns the rank or -1. */
static int parse_dims(const char *s, int64_t *dims, int max) {
    int n = 0;
    while (*s) {
        char *end;
        long long d = strtoll(s, &end, 10);
        if (end == s || d < 0 || n == max) return -1;
        dims[n++] = d;
        s = end;
        if (*s == 'x') s++;
        else if (*s) return -1;
    }
    return n;
}

int main(int argc, char **argv) {
    static const char *mlp_main[] = {"8x64", "64x128", "128", "128x10"};
    if (argc < 3) {
        fprintf(stderr, "usage: %s LIB FUNC [DIMS...]\n", argv[0]);
        return 2;
    }
    const char **shapes = argc > 3 ? (const char **)argv + 3 : mlp_main;
    int n_params = argc > 3 ? argc - 3 : 4;
    if (n_params > MAX_PARAMS) {
        fprintf(stderr, "at most %d parameters\n", MAX_PARAMS);
        return 2;
    }
    RelaxProgram *prog = relax_program_open(argv[1], 0);
    if (!prog) {
        fprintf(stderr, "error: %s\n", relax_last_error());
        return 1;
    }
    RelaxTensor *args[MAX_PARAMS];
    for (int p = 0; p < n_params; p++) {
        int64_t dims[8];
        int ndim = parse_dims(shapes[p], dims, 8);
        if (ndim < 0) {
            fprintf(stderr, "bad shape `%s`\n", shapes[p]);
            return 2;
        }
        size_t count = 1;
        for (int d = 0; d < ndim; d++) count *= (size_t)dims[d];
        float *data = malloc(count * sizeof(float) + 1);
        for (size_t i = 0; i < count; i++) data[i] = (float)((i * 37 + p) % 101) / 101.0f - 0.5f;
        args[p] = relax_tensor_new("float32", dims, ndim, data);
        free(data);
        if (!args[p]) {
            fprintf(stderr, "error: %s\n", relax_last_error());
            return 1;
        }
    }
    RelaxTensor *outs[MAX_OUTS];
    size_t n_outs = 0;
    if (relax_program_call(prog, argv[2], args, (size_t)n_params, outs, MAX_OUTS, &n_outs) != 0) {
        fprintf(stderr, "error: %s\n", relax_last_error());
        return 1;
    }
    for (size_t o = 0; o < n_outs; o++) {
        int ndim = relax_tensor_ndim(outs[o]);
        const int64_t *shape = relax_tensor_shape(outs[o]);
        printf("out%zu %s (", o, relax_tensor_dtype(outs[o]));
        for (int d = 0; d < ndim; d++) printf(d ? ", %lld" : "%lld", (long long)shape[d]);
        printf(")\n");
        size_t nbytes = relax_tensor_nbytes(outs[o]);
        if (strcmp(relax_tensor_dtype(outs[o]), "float32") == 0) {
            float *v = malloc(nbytes + 1);
            relax_tensor_read(outs[o], v);
            for (size_t i = 0; i < nbytes / sizeof(float); i++) printf("%.9g\n", v[i]);
            free(v);
        }
        relax_tensor_free(outs[o]);
    }
    for (int p = 0; p < n_params; p++) relax_tensor_free(args[p]);
    relax_program_close(prog);
    return 0;
}
