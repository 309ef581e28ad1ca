// SPDX-License-Identifier: MIT
/*
 * The session loop: worker threads that take turns at /dev/fuse, instead of libfuse's
 * multithreaded loop.
 *
 * Why: `find` or `grep -r` on a cold mount is a chain of round trips — the process asks, waits,
 * and asks again a few microseconds after the answer. libfuse's loop has every idle worker wait in
 * read() on /dev/fuse, and the kernel wakes the one that has waited longest: each request of the
 * chain lands on another thread than the last, which must be woken (on a VM, an interrupt to a
 * halted virtual CPU) and run with cold caches. Here one worker at a time has the turn: it reads
 * a request, answers it, and reads the next itself; after an answer it polls the device for a
 * moment (-o spin, 100 µs by default) before it sleeps, so the next request of the chain finds it
 * awake on its core. `find` of 100,000 runs: 27–28 s with libfuse's loop, 20–22 s with this one
 * (docs/performance-log.md).
 *
 * The other workers sleep until the turn is handed to one of them: when a request is read while
 * another already waits (two processes at once, or readahead's parallel READs), and when the
 * worker with the turn has been answering one request for WATCH_MS while others wait. The watch
 * thread looks every WATCH_MS while requests come (and sleeps when none has come for that long):
 * a slow request, or one that waits for the kernel — a page-cache store waits for the lock of its
 * page, which a READ holds until some worker answers it (fs_loop_watched) — never keeps the others
 * waiting longer than that. A worker whose turn was handed on finishes its request, then waits for
 * the turn again. Workers are started as the turn is handed to one that is not there (at most
 * -o max_threads), and kept.
 *
 * Signals: every thread blocks SIGTERM, SIGINT and SIGHUP; the loop's caller waits for them on a
 * signalfd, next to the eventfd a worker writes when the session ends (unmounted: read() answers
 * ENODEV). Either way it stops the workers: the one with the turn wakes from poll() on an eventfd.
 */
#include "fs.h"

#include "kx/common.h"

#include <fuse_lowlevel.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#define WATCH_MS 10

struct fs_loop {
	struct fuse_session *se;
	int fd;            /* /dev/fuse, non-blocking */
	int wake;          /* eventfd: the loop stops (poll() of the worker with the turn returns) */
	int ended;         /* eventfd: a worker saw the session end */
	double spin;       /* seconds the worker with the turn polls after an answer; 0: never */
	pthread_mutex_t lock;
	pthread_cond_t turn;  /* workers without the turn wait here */
	pthread_cond_t watch; /* the watch thread waits here */
	unsigned owner;    /* the worker with the turn (its number, from 1); 0: none */
	unsigned begun;    /* requests begun, by any worker */
	bool watching;     /* the watch thread looks every WATCH_MS (requests came lately) */
	bool stop;
	unsigned waiting;  /* workers waiting for the turn */
	unsigned handed;   /* workers still answering a request after their turn was handed on */
	unsigned nthreads, max_threads;
	struct {
		pthread_t thread;
		unsigned serving; /* requests it has begun and answered; odd: answering one */
	} *w;
	int error;         /* the first read error, as -errno */
};

/* The worker this thread is (its loop, its number from 1), if it is one. */
static _Thread_local struct fs_loop *t_loop;
static _Thread_local unsigned t_id;

static unsigned load(const unsigned *v)
{
	return __atomic_load_n(v, __ATOMIC_ACQUIRE);
}

static void *worker(void *arg);

/*
 * The worker with the turn gives it up: wake one that waits for it, or start one (l->lock held).
 * False, and the turn unchanged, when none can take it.
 */
static bool pass_turn(struct fs_loop *l)
{
	if (l->stop)
		return false;
	if (!l->waiting) {
		if (l->nthreads == l->max_threads || pthread_create(&l->w[l->nthreads].thread, NULL, worker, l) != 0)
			return false;
		l->nthreads++;
	}
	__atomic_store_n(&l->owner, 0, __ATOMIC_RELEASE);
	__atomic_add_fetch(&l->handed, 1, __ATOMIC_RELAXED);
	pthread_cond_signal(&l->turn);
	return true;
}

/* Stop: no worker takes the turn again, the watch thread ends (l->lock held). */
static void stop_locked(struct fs_loop *l)
{
	__atomic_store_n(&l->stop, true, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&l->turn);
	pthread_cond_signal(&l->watch);
}

bool fs_loop_watched(void)
{
	return t_loop && t_loop->max_threads > 1;
}

void fs_loop_hand_off(void)
{
	struct fs_loop *l = t_loop;
	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	if (load(&l->owner) == t_id)
		pass_turn(l);
	pthread_mutex_unlock(&l->lock);
}

/* Whether another request waits already. */
static bool more_waiting(struct fs_loop *l)
{
	struct pollfd p = { .fd = l->fd, .events = POLLIN };
	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/*
 * Until when to poll for the next request: not while a worker whose turn was handed on is still
 * answering (a page-cache store, a slow request): polling would take the core it needs.
 */
static double spin_until(struct fs_loop *l)
{
	return l->spin > 0 && !load(&l->handed) ? kx_monotonic() + l->spin : 0;
}

/*
 * Read the next request into buf: at once, by polling the device for l->spin, or by sleeping
 * in poll(). Returns its size, 0 once the session has ended (or the loop stops), -ECANCELED once
 * the turn has been handed on, or another -errno.
 */
static int take(struct fs_loop *l, struct fuse_buf *buf)
{
	double until = spin_until(l);
	for (;;) {
		if (fuse_session_exited(l->se) || __atomic_load_n(&l->stop, __ATOMIC_RELAXED))
			return 0;
		if (load(&l->owner) != t_id)
			return -ECANCELED;
		int r = fuse_session_receive_buf(l->se, buf);
		if (r != -EAGAIN && r != -EINTR)
			return r; /* 0: ENODEV, unmounted (libfuse has ended the session) */
		if (r == -EINTR || kx_monotonic() < until)
			continue;
		struct pollfd p[2] = { { .fd = l->fd, .events = POLLIN }, { .fd = l->wake, .events = POLLIN } };
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return -errno;
		until = spin_until(l);
	}
}

/* Answer requests while this worker has the turn. Returns what ended it (take()'s). */
static int serve(struct fs_loop *l, struct fuse_buf *buf)
{
	unsigned *serving = &l->w[t_id - 1].serving;
	int r;
	while ((r = take(l, buf)) > 0) {
		__atomic_add_fetch(&l->begun, 1, __ATOMIC_RELAXED);
		if (!__atomic_load_n(&l->watching, __ATOMIC_RELAXED)) {
			pthread_mutex_lock(&l->lock);
			__atomic_store_n(&l->watching, true, __ATOMIC_RELAXED);
			pthread_cond_signal(&l->watch);
			pthread_mutex_unlock(&l->lock);
		}
		if (l->max_threads > 1 && more_waiting(l)) /* with one worker, no one could take it */
			fs_loop_hand_off();
		__atomic_add_fetch(serving, 1, __ATOMIC_RELEASE); /* odd: answering */
		fuse_session_process_buf(l->se, buf);
		__atomic_add_fetch(serving, 1, __ATOMIC_RELEASE);
	}
	return r;
}

static void *worker(void *arg)
{
	struct fs_loop *l = arg;
	struct fuse_buf buf = { .mem = NULL };
	pthread_setname_np(pthread_self(), "kx-worker");
	pthread_mutex_lock(&l->lock); /* held by whoever started it until its slot is filled */
	t_loop = l;
	for (unsigned i = 0; i < l->nthreads; i++)
		if (pthread_equal(l->w[i].thread, pthread_self()))
			t_id = i + 1;
	while (!l->stop) {
		if (l->owner) {
			l->waiting++;
			pthread_cond_wait(&l->turn, &l->lock);
			l->waiting--;
			continue;
		}
		__atomic_store_n(&l->owner, t_id, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&l->lock);
		int r = serve(l, &buf);
		pthread_mutex_lock(&l->lock);
		if (r == -ECANCELED) {
			__atomic_sub_fetch(&l->handed, 1, __ATOMIC_RELAXED); /* its request is answered */
			continue;
		}
		/* the session ended, or the loop stops */
		if (r < 0 && !l->error)
			l->error = r;
		if (!l->stop) {
			stop_locked(l);
			uint64_t one = 1;
			if (write(l->ended, &one, sizeof(one)) < 0) { /* an eventfd write cannot fail here */ }
		}
	}
	pthread_mutex_unlock(&l->lock);
	free(buf.mem);
	return NULL;
}

/*
 * The watch: while requests come, look every WATCH_MS whether the worker with the turn is still
 * answering the request it was answering last time while others wait; if so, hand its turn on.
 */
static void *watch(void *arg)
{
	struct fs_loop *l = arg;
	unsigned owner = 0, serving = 0, begun = 0;
	pthread_setname_np(pthread_self(), "kx-watch");
	pthread_mutex_lock(&l->lock);
	while (!l->stop) {
		if (!l->watching) {
			pthread_cond_wait(&l->watch, &l->lock);
			continue;
		}
		struct timespec until = fs_deadline_ms(WATCH_MS);
		if (pthread_cond_timedwait(&l->watch, &l->lock, &until) != ETIMEDOUT)
			continue;
		unsigned o = load(&l->owner), s = o ? load(&l->w[o - 1].serving) : 0, b = load(&l->begun);
		if (o && o == owner && s == serving && (s & 1) && more_waiting(l))
			pass_turn(l); /* stuck: a slow request, or one waiting for the kernel */
		else if (b == begun && !(s & 1))
			__atomic_store_n(&l->watching, false, __ATOMIC_RELAXED); /* nothing came for WATCH_MS */
		owner = o;
		serving = s;
		begun = b;
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

void fs_loop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
}

/* How many CPUs this process may run on. */
static int cpus(void)
{
	cpu_set_t set;
	return sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
}

int fs_loop_run(struct fuse_session *se, unsigned max_threads, unsigned spin_us)
{
	struct fs_loop l = {
		.se = se,
		.fd = fuse_session_fd(se),
		.max_threads = max_threads ? max_threads : 1,
		/* with one CPU, polling would only keep the process it waits for from running */
		.spin = cpus() > 1 ? spin_us / 1e6 : 0,
		.lock = PTHREAD_MUTEX_INITIALIZER,
	};
	pthread_t watcher;
	bool watched = false;
	sigset_t set;
	fs_loop_signals(&set);
	fs_cond_init_monotonic(&l.turn);
	fs_cond_init_monotonic(&l.watch);
	int sig = signalfd(-1, &set, SFD_CLOEXEC), r = 0;
	l.wake = eventfd(0, EFD_CLOEXEC);
	l.ended = eventfd(0, EFD_CLOEXEC);
	l.w = calloc(l.max_threads, sizeof(*l.w));
	int flags = fcntl(l.fd, F_GETFL);
	if (sig < 0 || l.wake < 0 || l.ended < 0 || !l.w || flags < 0 || fcntl(l.fd, F_SETFL, flags | O_NONBLOCK) < 0)
		r = errno ? -errno : -ENOMEM;
	pthread_mutex_lock(&l.lock);
	if (r == 0 && (r = -pthread_create(&watcher, NULL, watch, &l)) == 0)
		watched = true;
	if (r == 0 && (r = -pthread_create(&l.w[0].thread, NULL, worker, &l)) == 0)
		l.nthreads = 1;
	pthread_mutex_unlock(&l.lock);

	/* until a signal, or the end of the session */
	while (r == 0) {
		struct pollfd p[2] = { { .fd = sig, .events = POLLIN }, { .fd = l.ended, .events = POLLIN } };
		if (poll(p, 2, -1) < 0) {
			if (errno != EINTR)
				r = -errno;
		} else if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(sig, &si, sizeof(si)) == sizeof(si))
				r = (int)si.ssi_signo; /* as libfuse's loops: the signal that ended it */
		} else if (p[1].revents & POLLIN) {
			break;
		}
	}
	fuse_session_exit(se);
	pthread_mutex_lock(&l.lock);
	stop_locked(&l);
	unsigned n = l.nthreads;
	pthread_mutex_unlock(&l.lock);
	uint64_t one = 1;
	if (l.wake >= 0 && write(l.wake, &one, sizeof(one)) < 0) { /* cannot fail: the counter is far from full */ }
	for (unsigned i = 0; i < n; i++)
		pthread_join(l.w[i].thread, NULL); /* none is started once stop is set */
	if (watched)
		pthread_join(watcher, NULL);
	if (r == 0)
		r = l.error;
	free(l.w);
	pthread_cond_destroy(&l.turn);
	pthread_cond_destroy(&l.watch);
	for (int *fd = (int[]){ sig, l.wake, l.ended }, *end = fd + 3; fd < end; fd++)
		if (*fd >= 0)
			close(*fd);
	return r;
}
