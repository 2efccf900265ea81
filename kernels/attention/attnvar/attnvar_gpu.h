/* attnvar_gpu.h: attnvar's GPU path (attnvar_gpu.c), called by main (attnvar.c). */
#ifndef ATTNVAR_GPU_H
#define ATTNVAR_GPU_H

#include "attnvar_cli.h"

#ifdef REPRO_HAVE_CUDA
/* Runs one cell on the GPU and prints its log; returns the exit code. */
int attnvar_run_gpu(const attnvar_args *a);
#endif

#endif
