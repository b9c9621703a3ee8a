/*
 * relax.h: the C API of the relax runtime (docs/library.md).
 *
 * Loads a library written by `relax-translate --emit=lib -o model.so`, makes tensors,
 * calls the library's Relax functions and reads their results. Link with
 * `-lrelax_runtime_c` (librelax_runtime_c.so or librelax_runtime_c.a, built by
 * `cargo build --release -p relax-capi`). No LLVM and no parser at run time.
 *
 * Errors: a function that fails returns NULL or a non-zero status and leaves a message
 * for relax_last_error() (per thread, valid until the next call on that thread).
 * Objects are not thread-safe: use one program from one thread at a time.
 */
#ifndef RELAX_H
#define RELAX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A loaded library: its kernels, its executable and a thread pool. */
typedef struct RelaxProgram RelaxProgram;
/* A dense row-major tensor owned by the caller until relax_tensor_free. */
typedef struct RelaxTensor RelaxTensor;

/* The message of the last failure on this thread ("" when none). */
const char *relax_last_error(void);

/* Opens `path`; `threads` threads for the kernels' parallel loops (0: one per CPU).
 * NULL on failure. */
RelaxProgram *relax_program_open(const char *path, int32_t threads);
/* Closes a program (NULL is ignored). Tensors it returned stay valid. */
void relax_program_close(RelaxProgram *program);
/* The number of Relax functions the program can call, and the name of the i-th
 * (NULL when out of range; owned by the program). */
size_t relax_program_function_count(const RelaxProgram *program);
const char *relax_program_function_name(const RelaxProgram *program, size_t i);

/* Calls function `name` on `args` (tensors; not consumed). The result's tensors, the
 * fields of a (nested) tuple in order, are stored in outs[0..*n_outs] when they fit in
 * `max_outs`; each is the caller's to free. Returns 0 on success. */
int32_t relax_program_call(RelaxProgram *program, const char *name, RelaxTensor *const *args, size_t n_args,
                           RelaxTensor **outs, size_t max_outs, size_t *n_outs);

/* A tensor of `dtype` ("float32", "float16", "int64", ...) and `shape`, its bytes copied
 * from `data` (row-major; NULL: zeros). NULL on failure. */
RelaxTensor *relax_tensor_new(const char *dtype, const int64_t *shape, int32_t ndim, const void *data);
void relax_tensor_free(RelaxTensor *tensor);
int32_t relax_tensor_ndim(const RelaxTensor *tensor);
/* The dims (ndim of them; owned by the tensor). */
const int64_t *relax_tensor_shape(const RelaxTensor *tensor);
/* The element type's name (owned by the tensor). */
const char *relax_tensor_dtype(const RelaxTensor *tensor);
size_t relax_tensor_nbytes(const RelaxTensor *tensor);
/* Copies the tensor's bytes to `out` (at least relax_tensor_nbytes bytes). */
void relax_tensor_read(const RelaxTensor *tensor, void *out);

#ifdef __cplusplus
}
#endif

#endif /* RELAX_H */
