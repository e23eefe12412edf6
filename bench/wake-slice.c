// How late a thread that sleeps 2.5 ms (an open model's worker at 400 arrivals/s) wakes while
// a CPU-bound thread shares its core, with the kernel's default time slice and with the short
// slice loadlab's workers ask for (crates/timer/src/resolution.rs prefer_prompt_wakeups).
// Usage: wake-slice SHORT(0|1) HOG(0|1); bench/wake-slice.sh runs it.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/prctl.h>
struct attr { uint32_t size, policy; uint64_t flags; int32_t nice; uint32_t prio; uint64_t runtime, deadline, period; uint32_t umin, umax; };
static volatile int stop;
static void pin(int c){ cpu_set_t s; CPU_ZERO(&s); CPU_SET(c,&s); pthread_setaffinity_np(pthread_self(),sizeof s,&s); }
static void *hog(void*a){ pin(0); while(!stop){ } return 0; }
static double now(){ struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec*1e6+t.tv_nsec/1e3; }
static int cmp(const void*a,const void*b){ double x=*(double*)a,y=*(double*)b; return x<y?-1:x>y; }
int main(int argc,char**argv){
  int shortslice = atoi(argv[1]); int hogs = atoi(argv[2]);
  pthread_t h; if(hogs) pthread_create(&h,0,hog,0);
  pin(0); prctl(PR_SET_TIMERSLACK,1,0,0,0);
  if(shortslice){ struct attr a={0}; syscall(SYS_sched_getattr,0,&a,sizeof a,0); a.size=sizeof a; a.runtime=100000; if (syscall(SYS_sched_setattr,0,&a,0)) perror("sched_setattr"); }
  int fd=timerfd_create(CLOCK_MONOTONIC,0); int n=2000; double *late=malloc(n*sizeof(double));
  for(int i=0;i<n;i++){ struct itimerspec s={{0,0},{0,2500000}}; double d=now()+2500; timerfd_settime(fd,0,&s,0); uint64_t x; read(fd,&x,8); late[i]=now()-d; }
  stop=1; qsort(late,n,sizeof(double),cmp);
  printf("short=%d hog=%d late p50 %.0f p90 %.0f p99 %.0f max %.0f us\n",shortslice,hogs,late[n/2],late[n*9/10],late[n*99/100],late[n-1]);
}
