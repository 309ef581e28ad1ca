// SPDX-License-Identifier: MIT
/*
 * The daemon's messages: fs_log_error for failures, fs_log_debug for what -d shows, both
 * one line through libfuse's logger (stderr, or syslog once detached), prefixed "kindexfs: ".
 * Every other file of src/fs logs through these; this one calls none of them.
 */
#include "fs.h"

#include <fuse_lowlevel.h>

#include <stdarg.h>
#include <stdio.h>

/* One line at `level`: the message, whole up to 1 KiB, after the daemon's name. */
static void log_line(enum fuse_log_level level, const char *fmt, va_list ap)
{
	char msg[1024];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fuse_log(level, "kindexfs: %s\n", msg);
}

void fs_log_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_line(FUSE_LOG_ERR, fmt, ap);
	va_end(ap);
}

void fs_log_debug(const struct fs *fs, const char *fmt, ...)
{
	if (!fs->debug)
		return;
	va_list ap;
	va_start(ap, fmt);
	log_line(FUSE_LOG_DEBUG, fmt, ap);
	va_end(ap);
}
