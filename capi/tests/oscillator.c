/* Drives examples/forced_oscillator.fd through the C API: k set to 400 N/m, the
 * input F = 2 N held from t = 0, 1000 steps of 1 ms; checks z(t) against
 * z = F/k - (x0 + F/k) cos(sqrt(k/m) t) every 100 steps, and that errors come back
 * as codes with a message. Exit 0 when all holds. */
#include "fdc.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define CHECK(call)                                                            \
    do {                                                                       \
        FdcStatus st_ = (call);                                                \
        if (st_ != FDC_STATUS_OK) {                                            \
            fprintf(stderr, "%s failed (%d): %s\n", #call, (int)st_,           \
                    fdc_last_error());                                         \
            return 1;                                                          \
        }                                                                      \
    } while (0)

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s forced_oscillator.fd\n", argv[0]);
        return 2;
    }
    const double k = 400.0, m = 1.0, x0 = 0.05, F = 2.0;
    FdcModel *model = NULL;
    CHECK(fdc_model_load(argv[1], &model));
    CHECK(fdc_model_set_parameter(model, "k", k));
    if (fdc_model_set_parameter(model, "no_such", 1.0) != FDC_STATUS_NOT_FOUND ||
        strstr(fdc_last_error(), "no_such") == NULL) {
        fprintf(stderr, "unknown parameter not reported\n");
        return 1;
    }
    FdcSim *sim = NULL;
    CHECK(fdc_sim_new(model, 1e-3, &sim));
    fdc_model_free(model); /* the simulator does not need it */
    size_t force, z;
    CHECK(fdc_sim_input_index(sim, "F", &force));
    CHECK(fdc_sim_output_index(sim, "z", &z));
    if (fdc_sim_output(sim, fdc_sim_output_count(sim), &(double){0}) != FDC_STATUS_ARGUMENT) {
        fprintf(stderr, "out-of-range output index not reported\n");
        return 1;
    }
    CHECK(fdc_sim_set_input(sim, force, F));
    const double w = sqrt(k / m);
    double worst = 0.0;
    for (int i = 1; i <= 1000; i++) {
        CHECK(fdc_sim_step(sim));
        if (i % 100 == 0) {
            double t = fdc_sim_time(sim), value;
            CHECK(fdc_sim_output(sim, z, &value));
            double exact = F / k - (x0 + F / k) * cos(w * t);
            double err = fabs(value - exact);
            printf("t = %.3f  z = %.9f  exact = %.9f\n", t, value, exact);
            if (err > worst) worst = err;
        }
    }
    double t_end = fdc_sim_time(sim);
    fdc_sim_free(sim);
    printf("largest error %.3e m\n", worst);
    if (fabs(t_end - 1.0) > 1e-12) {
        fprintf(stderr, "time %.17g after 1000 steps of 1 ms\n", t_end);
        return 1;
    }
    /* Amplitude 0.055 m. F set after the initial conditions is a jump that HHT's
     * first steps follow to first order only: the Python test measured 8e-5 m. */
    return worst < 2.5e-4 ? 0 : 1;
}
