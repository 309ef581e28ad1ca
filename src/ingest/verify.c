// SPDX-License-Identifier: MIT
/*
 * Signatures checked beside the rest of an ingest (SPEC §10). An Ed25519 check costs about as much
 * as everything else an ingest does for a run, and needs nothing but the signature and the run's
 * digest: as a file is parsed, each valid manifest's signatures are copied into blocks that are
 * queued here, worker threads check them while parsing and staging go on, and the thread staging
 * the file helps with what is left before it decides the file.
 */
#include "private.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

struct kx_verify_pool {
	pthread_mutex_t lock;
	pthread_cond_t work; /* a block was queued, or the pool stops */
	pthread_cond_t done; /* a block was checked */
	struct verify_block *head, *tail;
	bool stop;
	unsigned n;
	pthread_t th[];
};

/* Under the lock: take b (queued) off the queue. */
static void unqueue(struct kx_verify_pool *p, struct verify_block *b)
{
	struct verify_block **at = &p->head, *prev = NULL;
	while (*at != b) {
		prev = *at;
		at = &(*at)->queue;
	}
	*at = b->queue;
	if (p->tail == b)
		p->tail = prev;
	b->queue = NULL;
}

/* Under the lock: check b (taken off the queue) with the lock dropped, then count it done. */
static void check(struct kx_verify_pool *p, struct verify_block *b)
{
	pthread_mutex_unlock(&p->lock);
	for (size_t i = 0; i < b->n; i++)
		b->v[i].bad = !kx_signature_good(&b->v[i].run, &b->v[i].x);
	pthread_mutex_lock(&p->lock);
	if (--b->job->pending == 0)
		pthread_cond_broadcast(&p->done);
}

/* Under the lock: check the first queued block of job j (of any job: NULL); false for none. */
static bool check_next(struct kx_verify_pool *p, const struct verify_job *j)
{
	struct verify_block *b = p->head;
	while (b && j && b->job != j)
		b = b->queue;
	if (!b)
		return false;
	unqueue(p, b);
	check(p, b);
	return true;
}

static void *worker(void *arg)
{
	struct kx_verify_pool *p = arg;
	pthread_mutex_lock(&p->lock);
	while (!p->stop)
		if (!check_next(p, NULL))
			pthread_cond_wait(&p->work, &p->lock);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int kx_verify_pool_new(unsigned threads, struct kx_verify_pool **ret)
{
	struct kx_verify_pool *p = calloc(1, sizeof(*p) + threads * sizeof(p->th[0]));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	/* fewer threads than asked for is no failure: the stager checks what nobody else does */
	while (p->n < threads && pthread_create(&p->th[p->n], NULL, worker, p) == 0)
		p->n++;
	*ret = p;
	return 0;
}

void kx_verify_pool_free(struct kx_verify_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->n; i++)
		pthread_join(p->th[i], NULL);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	free(p);
}

/* Queue j's last block (full, or the file's end). */
static void submit(struct verify_job *j)
{
	struct kx_verify_pool *p = j->pool;
	struct verify_block *b = j->last;
	pthread_mutex_lock(&p->lock);
	j->pending++;
	if (p->tail)
		p->tail->queue = b;
	else
		p->head = b;
	p->tail = b;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
}

int ingest_verify_add(void *job, size_t index, const struct kx_manifest *m)
{
	struct verify_job *j = job;
	for (size_t k = 0; k < m->nsigs; k++) {
		if (!j->last || j->last->n == VERIFY_BLOCK) {
			struct verify_block *b = calloc(1, sizeof(*b));
			if (!b)
				return -ENOMEM;
			b->job = j;
			if (j->last)
				j->last->next = b;
			else
				j->first = b;
			j->last = b;
		}
		j->last->v[j->last->n++] = (struct verify_item){
			.run = m->digest[KX_DOC_RUN], .x = m->sigs[k], .manifest = index
		};
		if (j->last->n == VERIFY_BLOCK)
			submit(j);
	}
	return 0;
}

void ingest_verify_seal(struct verify_job *j)
{
	if (j->last && j->last->n < VERIFY_BLOCK) /* a full one is queued already */
		submit(j);
}

void ingest_verify_finish(struct verify_job *j)
{
	struct kx_verify_pool *p = j->pool;
	pthread_mutex_lock(&p->lock);
	while (j->pending)
		if (!check_next(p, j))
			pthread_cond_wait(&p->done, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

void ingest_verify_cancel(struct verify_job *j)
{
	struct kx_verify_pool *p = j->pool;
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	struct verify_block **at = &p->head;
	p->tail = NULL;
	while (*at) {
		if ((*at)->job == j) {
			*at = (*at)->queue;
			j->pending--;
		} else {
			p->tail = *at;
			at = &(*at)->queue;
		}
	}
	while (j->pending)
		pthread_cond_wait(&p->done, &p->lock);
	pthread_mutex_unlock(&p->lock);
	while (j->first) {
		struct verify_block *b = j->first;
		j->first = b->next;
		free(b);
	}
	*j = (struct verify_job){ 0 };
}
