//! The timing engine: many short trials, subjects interleaved trial by trial, best kept.
//!
//! IMPLEMENTATION NOTE: on a shared, preempted VM a single long measurement mostly measures
//! the neighbours. A short trial (about 1-2 ms, with inner repetition for small messages) is
//! often undisturbed, so the best of many is close to the true cost; interleaving the subjects
//! trial by trial exposes them to the same conditions, so their ratios are meaningful.

use std::hint::black_box;
use std::time::{Duration, Instant};

use super::subjects::Subject;

#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Target length of one trial.
    pub trial: Duration,
    /// Trials per subject when they are cheap.
    pub trials: usize,
    /// Trials per subject however slow (at least 1).
    pub min_trials: usize,
    /// Time budget per subject per case; limits trials for slow subjects.
    pub budget: Duration,
    /// A subject whose single call is projected to take longer than this is skipped.
    pub max_call: Duration,
}

impl Settings {
    pub const QUICK: Settings = Settings {
        trial: Duration::from_millis(1),
        trials: 40,
        min_trials: 2,
        budget: Duration::from_millis(80),
        max_call: Duration::from_millis(300),
    };
    pub const FULL: Settings = Settings {
        trial: Duration::from_micros(1500),
        trials: 40,
        min_trials: 3,
        budget: Duration::from_millis(150),
        max_call: Duration::from_secs(3),
    };
}

impl Settings {
    /// `n` trials per subject (however slow: `min_trials` too), with the budget grown so that
    /// `n` trials of the target length fit in it.
    pub fn with_trials(self, n: usize) -> Settings {
        let n = n.max(1);
        Settings {
            trials: n,
            min_trials: n,
            budget: self.budget.max(self.trial * n as u32),
            ..self
        }
    }
}

fn time_calls(s: &mut dyn Subject, buf: &mut [u8], size: usize, reps: u64) -> Duration {
    let t = Instant::now();
    for _ in 0..reps {
        s.run(black_box(&mut *buf), black_box(size));
    }
    black_box(&mut *buf);
    t.elapsed()
}

/// Returns the best time per call, in nanoseconds, of each subject (`None` where `active`
/// is false: those are not run).
pub fn measure(
    subjects: &mut [Box<dyn Subject>],
    active: &[bool],
    buf: &mut [u8],
    size: usize,
    set: &Settings,
) -> Vec<Option<f64>> {
    let n = subjects.len();
    let target = set.trial.as_nanos() as f64;
    let mut reps = vec![1u64; n];
    let mut trials = vec![set.min_trials.max(1); n];
    let mut best = vec![f64::INFINITY; n];
    // Warm up (code, data, key) and calibrate the inner repetition count.
    for (i, s) in subjects.iter_mut().enumerate() {
        if !active[i] {
            trials[i] = 0;
            continue;
        }
        let _ = time_calls(s.as_mut(), buf, size, 1);
        let mut r = 1u64;
        let per_call = loop {
            let t = time_calls(s.as_mut(), buf, size, r).as_nanos() as f64;
            best[i] = best[i].min(t / r as f64);
            if t >= target / 4.0 || r >= 1 << 26 {
                break t / r as f64;
            }
            r *= 4;
        };
        reps[i] = ((target / per_call.max(0.1)) as u64).max(1);
        let trial_ns = per_call * reps[i] as f64;
        let fit = (set.budget.as_nanos() as f64 / trial_ns.max(1.0)) as usize;
        trials[i] = fit.clamp(set.min_trials.max(1), set.trials.max(set.min_trials));
    }
    let rounds = trials.iter().copied().max().unwrap_or(0);
    for t in 0..rounds {
        for k in 0..n {
            // Rotate the order so no subject always runs first.
            let i = (k + t) % n;
            if t >= trials[i] || !active[i] {
                continue;
            }
            let d = time_calls(subjects[i].as_mut(), buf, size, reps[i]);
            best[i] = best[i].min(d.as_nanos() as f64 / reps[i] as f64);
        }
    }
    best.iter()
        .zip(active)
        .map(|(&b, &a)| a.then_some(b))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts its calls; each takes about `spin` of busy time.
    struct Counter {
        calls: std::rc::Rc<std::cell::Cell<u64>>,
        spin: Duration,
    }

    impl Subject for Counter {
        fn impl_name(&self) -> &'static str {
            "aesx"
        }
        fn backend(&self) -> String {
            "test".into()
        }
        fn run(&mut self, _buf: &mut [u8], _size: usize) {
            self.calls.set(self.calls.get() + 1);
            let t = Instant::now();
            while t.elapsed() < self.spin {}
        }
    }

    #[test]
    fn with_trials_runs_that_many_trials_even_for_a_slow_subject() {
        // A call of 2 ms is longer than the 1.5 ms trial, so each trial is one call, and
        // FULL's 150 ms budget would allow about 75; 120 trials must run all the same (plus
        // the warm-up and calibration calls, at most 3).
        let calls = std::rc::Rc::new(std::cell::Cell::new(0));
        let mut subjects: Vec<Box<dyn Subject>> = vec![Box::new(Counter {
            calls: calls.clone(),
            spin: Duration::from_millis(2),
        })];
        let set = Settings::FULL.with_trials(120);
        assert_eq!((set.trials, set.min_trials), (120, 120));
        assert!(set.budget >= set.trial * 120);
        let mut buf = [0u8; 32];
        let best = measure(&mut subjects, &[true], &mut buf, 16, &set);
        assert!(best[0].is_some_and(|ns| ns >= 2e6));
        let n = calls.get();
        assert!((120..=123).contains(&n), "{n} calls");
        // Without it, the budget caps the trials.
        calls.set(0);
        measure(&mut subjects, &[true], &mut buf, 16, &Settings::FULL);
        assert!(calls.get() < 100, "{} calls", calls.get());
    }
}
