//! Exchanges between the workers of a mesh, each one small timely dataflow run to completion.
//!
//! Every worker must call the same functions in the same order (each builds a dataflow, and
//! timely matches dataflows across workers by the order they are built). Results come in a
//! fixed order, never in arrival order, so what a worker computes from them does not depend on
//! timing or on how the work was spread.

use std::cell::RefCell;
use std::rc::Rc;

use timely::dataflow::operators::{Exchange, Input, Inspect, Probe};
use timely::worker::Worker;

/// Sends `items` to the workers they are addressed to and runs the dataflow to completion;
/// returns what this worker received, ordered by sender and then by the sender's order.
pub(super) fn route_all(worker: &mut Worker, items: Vec<(u64, Vec<u8>)>) -> Vec<Vec<u8>> {
    // (addressee, sender, sender's sequence number, bytes)
    type Item = (u64, usize, u64, Vec<u8>);
    type Received = Rc<RefCell<Vec<(usize, u64, Vec<u8>)>>>;
    let me = worker.index();
    let received: Received = Rc::default();
    let sink = Rc::clone(&received);
    let (mut input, probe) = worker.dataflow::<u64, _, _>(|scope| {
        let (input, stream) = scope.new_input::<Vec<Item>>();
        let (probe, _) = stream
            .exchange(|(to, ..): &Item| *to)
            .inspect(move |(_, from, seq, d): &Item| {
                sink.borrow_mut().push((*from, *seq, d.clone()))
            })
            .probe();
        (input, probe)
    });
    for (seq, (to, item)) in items.into_iter().enumerate() {
        input.send((to, me, seq as u64, item));
    }
    input.close();
    while !probe.done() {
        worker.step_or_park(None);
    }
    let mut received = std::mem::take(&mut *received.borrow_mut());
    received.sort_by_key(|(from, seq, _)| (*from, *seq));
    received.into_iter().map(|(_, _, d)| d).collect()
}

#[cfg(test)]
mod tests {
    use super::super::{run, Greeting, MeshConfig};

    #[test]
    fn gathers_arrive_in_worker_order_on_every_worker_or_on_the_leader() {
        let greeting = Greeting {
            process: 0,
            version: String::new(),
            configuration: String::new(),
            corpus: String::new(),
        };
        let config = MeshConfig {
            workers: 3,
            ..MeshConfig::single()
        };
        let out = run(&config, &greeting, |w| {
            let me = w.index();
            let all = w.all_gather(format!("w{me}")).unwrap();
            let led = w.gather_to_leader(vec![me * 10, me * 10 + 1]).unwrap();
            (all, led)
        })
        .unwrap();
        for (all, _) in &out {
            assert_eq!(all, &["w0", "w1", "w2"]);
        }
        assert_eq!(out[0].1, [0, 1, 10, 11, 20, 21]);
        assert!(out[1].1.is_empty() && out[2].1.is_empty());
    }
}
