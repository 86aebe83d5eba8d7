/* The C API of fdc (capi/src/lib.rs). Written in the layout cbindgen produces;
 * capi/tests/header.rs checks that it declares every exported function. */

#ifndef FDC_H
#define FDC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* What a call did. */
typedef enum FdcStatus {
    FDC_STATUS_OK = 0,
    /* A null pointer, an index out of range, a string that is not UTF-8. */
    FDC_STATUS_ARGUMENT = 1,
    /* The model file cannot be read. */
    FDC_STATUS_IO = 2,
    /* The model has errors (the message is the rendered diagnostics). */
    FDC_STATUS_MODEL = 3,
    /* Code generation or the runtime's setup failed. */
    FDC_STATUS_BUILD = 4,
    /* Initial conditions or a step failed (the simulator keeps its last state). */
    FDC_STATUS_SIMULATION = 5,
    /* No parameter, input or output of that name. */
    FDC_STATUS_NOT_FOUND = 6,
    /* An internal error (a bug): the object must not be used again. */
    FDC_STATUS_PANIC = 7,
} FdcStatus;

/* A built model; parameters set on it apply to the simulators made afterwards. */
typedef struct FdcModel FdcModel;

/* A simulator at its current time. */
typedef struct FdcSim FdcSim;

#ifdef __cplusplus
extern "C" {
#endif

/* The message of the last failed call on this thread ("" if none). Valid until the
 * next call of this API on the same thread. */
const char *fdc_last_error(void);

/* Loads, checks and compiles the model file `path` (with the on-disk object cache);
 * `*out` receives a model to free with fdc_model_free. */
FdcStatus fdc_model_load(const char *path, FdcModel **out);

/* Frees a model (null is ignored). Simulators made from it stay valid. */
void fdc_model_free(FdcModel *m);

/* Sets a (scalar) model parameter for the simulators made afterwards. */
FdcStatus fdc_model_set_parameter(FdcModel *m, const char *name, double value);

/* Makes a simulator at t = 0 (initial conditions solved) with the model's settings
 * and step size `step` (the model's when step <= 0); free it with fdc_sim_free. */
FdcStatus fdc_sim_new(const FdcModel *m, double step, FdcSim **out);

/* Frees a simulator (null is ignored). */
void fdc_sim_free(FdcSim *s);

/* The index of the input `name` in `*out`. */
FdcStatus fdc_sim_input_index(const FdcSim *s, const char *name, size_t *out);

/* Sets input `index`; the next step sees it. */
FdcStatus fdc_sim_set_input(FdcSim *s, size_t index, double value);

/* One step of the simulator's step size. Allocates nothing. */
FdcStatus fdc_sim_step(FdcSim *s);

/* The simulator's time [s] (NaN for a null simulator). */
double fdc_sim_time(const FdcSim *s);

/* Number of outputs (result channels); 0 for a null simulator. */
size_t fdc_sim_output_count(const FdcSim *s);

/* The index of the output (channel) `name` in `*out`. */
FdcStatus fdc_sim_output_index(const FdcSim *s, const char *name, size_t *out);

/* Output `index` at the current time in `*value`. */
FdcStatus fdc_sim_output(FdcSim *s, size_t index, double *value);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FDC_H */
