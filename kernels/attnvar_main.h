/* attnvar_main.h: pieces of attnvar shared by its CPU (attnvar.c) and GPU (attnvar_gpu.c)
 * paths. */
#ifndef ATTNVAR_MAIN_H
#define ATTNVAR_MAIN_H

#include "attnvar_cli.h"

/* "config workload=.. system=.. batch=.. heads=.. dim=.. seqlen=.. dtype=fp16 device=.. impl=.." */
void attnvar_print_config(const attnvar_args *a, const char *device, const char *impl);

#ifdef REPRO_HAVE_CUDA
/* The GPU path; returns the exit code. */
int attnvar_run_gpu(const attnvar_args *a);
#endif

#endif
