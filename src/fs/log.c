// SPDX-License-Identifier: MIT
/*
 * The daemon's messages: kx_fs_log_error for failures, kx_fs_log_debug for what -d shows, both
 * one line through libfuse's logger (stderr, or syslog once detached), prefixed "kindexfs: ".
 * Every other file of src/fs logs through these; this one calls none of them.
 */
#include "fs.h"

#include <fuse_lowlevel.h>

#include <stdarg.h>
#include <stdio.h>

void kx_fs_log_error(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fuse_log(FUSE_LOG_ERR, "kindexfs: %s\n", msg);
}

void kx_fs_log_debug(const struct kx_fs *fs, const char *fmt, ...)
{
	if (!fs->debug)
		return;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fuse_log(FUSE_LOG_DEBUG, "kindexfs: %s\n", msg);
}
