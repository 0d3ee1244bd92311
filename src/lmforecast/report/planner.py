"""The report's interactive planner: a supervised law's answers computed in the page.

`planner_data(model)` gathers what the page needs from a fitted `SupervisedScalingLaw` of a
Chinchilla form: the fitted parameters and every bootstrap draw (fit space, as the law's
`predict_target` takes them), and the calibration terms of docs/trust.md at a few levels.
`planner_html(data)` renders inputs (a compute budget C, or N and D) and a script that repeats,
number for number, what the library does:

- the forecast L(N, D) and its interval: `supervised.intervals.log_interval` (s_boot from the
  16-84 percentile spread of the draws' log forecasts, run scatter, drift m r and scatter k r
  at distance r = max(0, ln C/C_max, ln N/N_max, ln D/D_max));
- N*, D*, L* for C under 6ND: `compute.allocation.closed_form_6nd` (Eq. 2 / Hoffmann Eq. 4);
- their intervals: `SupervisedScalingLaw.allocate_interval` (percentiles over the draws,
  numpy's linear interpolation; for N* and D*, with the runs' own isoFLOP optima's offset
  where the fit recorded one, `supervised.allocation.allocation_interval`);
- distillation vs supervised at the planner's N and D for a given teacher loss L_T:
  `DistillationScalingLaw.predict` (Eq. 8) and `supervised_loss` (Eq. 1) of a published
  distillation preset (`distill_data`), i.e. `lmforecast distill predict --teacher-loss`.

Every input is read as the CLI's numeric flags read theirs (`7B`, `1.4T tokens`, `1e22 FLOPs`;
K, M, B/G, T, P), every change recomputes (no button needed), an input that cannot be read
empties every output cell beside its message, an interval spanning more than three decades
shows as "not identified" (these runs do not pin it), and the budget's rows (N*, D*, L* and the note
telling L*'s interval from the forecast's) show only in the budget mode.

Everything is embedded in the HTML as JSON (and in report.json), no server, no network.
"""

from __future__ import annotations

import html
import json
from typing import Any

from scipy.stats import t

from ..distill.presets import DISTILL_PRESETS
from ..supervised import intervals as iv
from ..supervised.presets import PRESETS
from ..uncertainty.normal import normal_ppf

LEVELS = (0.5, 0.8, 0.9, 0.95)


def planner_data(model) -> dict[str, Any]:
    """The numbers the planner computes from (JSON-able)."""
    res = model.result_
    law = res.law_
    if law.name not in ("chinchilla", "chinchilla-gamma"):
        raise ValueError(f"the planner supports the Chinchilla forms, not {law.name!r}")
    cal = res.meta.get("intervals") or {}
    if res.meta.get("stack"):
        raise ValueError("the planner repeats a single form's interval; fit with stack=False")
    terms = {}
    for lv in LEVELS:
        if "k" in cal:  # the real-suite prior (docs/trust.md): z (sqrt(noise^2 + s_boot^2) + k r)
            m, k, lam = 0.0, 0.0, 1.0
        else:  # presets and fits without the prior: the rolling-origin calibration
            m, k, lam = iv.interval_terms(cal, lv) if cal else (0.0, 0.0, 1.0)
        terms[f"{lv:g}"] = {"z": float(normal_ppf(0.5 + lv / 2)), "m": m, "k": k, "lam": lam}
    alloc = res.meta.get("allocation")  # supervised.allocation.allocation_interval
    if alloc:
        for lv in LEVELS:
            terms[f"{lv:g}"]["t_alloc"] = float(t.ppf(0.5 + lv / 2, int(alloc["n"]) - 1))
    return {
        "k_prior": float(cal["k"]) if "k" in cal else None,
        **{
            key: float(cal[key]) if cal.get(key) else None
            for key in ("min_compute", "min_N", "min_D")
        },
        "form": law.name,
        "theta": [float(v) for v in res.theta],
        "draws": [[float(v) for v in th] for th in (res.bootstrap or [])],
        "noise": float(cal.get("noise", 0.0)),
        "max_compute": float(cal["max_compute"]) if cal.get("max_compute") else None,
        "max_N": float(cal["max_N"]) if cal.get("max_N") else None,
        "max_D": float(cal["max_D"]) if cal.get("max_D") else None,
        "terms": terms,
        "allocation": dict(alloc) if alloc else None,
    }


def distill_data(name: str = "busbridge2025") -> dict[str, Any]:
    """Natural coefficients of a distillation preset (Eq. 8) and of its supervised column
    (Eq. 1, L = E + (A/N^alpha + B/D^beta)^gamma) for the planner's distillation answer."""
    d = DISTILL_PRESETS[name]
    sup = PRESETS[d["supervised"]]
    if sup["form"] not in ("chinchilla", "chinchilla-gamma"):
        raise ValueError(f"the planner supports Chinchilla supervised columns, not {sup['form']!r}")
    ps = {"gamma": 1.0, **sup["params"]}
    return {"preset": name, "params": dict(d["params"]), "supervised": ps}


_JS = r"""
(function(){
const P = JSON.parse(document.getElementById('planner-data').textContent);
const $ = id => document.getElementById(id);
function lse2(a, b){
  const m = Math.max(a, b);
  return m + Math.log(Math.exp(a - m) + Math.exp(b - m));
}
function target(th, N, D){  // laws.chinchilla.ChinchillaGamma._parts: log L
  const g = th.length > 5 ? th[5] : 1.0;
  const m = lse2(th[0] - th[3] * Math.log(N), th[1] - th[4] * Math.log(D));
  return lse2(th[2], g * m);
}
function natural(th){
  return {A: Math.exp(th[0]), B: Math.exp(th[1]), E: Math.exp(th[2]), alpha: th[3], beta: th[4],
          gamma: th.length > 5 ? th[5] : 1.0};
}
function quantile(xs, q){  // numpy's default (linear) quantile
  const s = xs.filter(v => !Number.isNaN(v)).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const h = (s.length - 1) * q, lo = Math.floor(h), hi = Math.ceil(h);
  return s[lo] + (h - lo) * (s[hi] - s[lo]);
}
function forecast(N, D, level){  // SupervisedScalingLaw.predict_interval (kind="forecast")
  const t = target(P.theta, N, D), T = P.terms[level];
  let sb = 0;
  if (P.draws.length){
    const tb = P.draws.map(th => target(th, N, D));
    sb = 0.5 * (quantile(tb, 0.841345) - quantile(tb, 0.158655));
  }
  let r = 0;  // supervised.intervals.distance: beyond the fitted runs, above or below
  if (P.max_compute){
    r = Math.log(6 * N * D / P.max_compute);
    if (P.max_N) r = Math.max(r, Math.log(N / P.max_N));
    if (P.max_D) r = Math.max(r, Math.log(D / P.max_D));
    if (P.min_compute) r = Math.max(r, Math.log(P.min_compute / (6 * N * D)));
    if (P.min_N) r = Math.max(r, Math.log(P.min_N / N));
    if (P.min_D) r = Math.max(r, Math.log(P.min_D / D));
    r = Math.max(0, r);
  }
  if (P.k_prior !== null){  // supervised.calibration.interval: the prior's k r, added linearly
    const h = T.z * (Math.sqrt(sb * sb + P.noise * P.noise) + P.k_prior * r);
    return {L: Math.exp(t), lo: Math.exp(t - h), hi: Math.exp(t + h)};
  }
  const s = Math.sqrt(T.lam * T.lam * (sb * sb + P.noise * P.noise) + (T.k * r) ** 2);
  return {L: Math.exp(t), lo: Math.exp(t - T.z * s - Math.max(0, -T.m * r)),
          hi: Math.exp(t + T.z * s + Math.max(0, T.m * r))};
}
function optimal(p, C){  // compute.allocation.closed_form_6nd and _loss
  const a = p.alpha, b = p.beta, G = Math.pow(a * p.A / (b * p.B), 1 / (a + b)), c6 = C / 6;
  const N = G * Math.pow(c6, b / (a + b)), D = Math.pow(c6, a / (a + b)) / G;
  const L = p.E + Math.pow(p.A / Math.pow(N, a) + p.B / Math.pow(D, b), p.gamma);
  return {N: N, D: D, L: L};
}
function distill(N, D, LT){  // DistillationLaw.loss (Eq. 8) with L~_S from the preset (Eq. 1)
  const q = P.distill.params, s = P.distill.supervised;
  const Lsup = s.E + Math.pow(s.A / Math.pow(N, s.alpha) + s.B / Math.pow(D, s.beta), s.gamma);
  const x = LT / (Lsup * q.d1);
  const bracket = Math.pow(1 + Math.pow(x, 1 / q.f1), -q.c1 * q.f1);
  const power = Math.pow(q["A'"] / Math.pow(N, q["alpha'"]) + q["B'"] / Math.pow(D, q["beta'"]),
                         q["gamma'"]);
  return {sup: Lsup, dist: LT + Math.pow(LT, -q.c0) * bracket * power};
}
function fmt(v){ return Number.isFinite(v) ? v.toPrecision(6) : String(v); }
function put(id, v){ $(id).textContent = fmt(v); }
function putInterval(id, lo, hi){  // wider than MAX_SPAN (a ratio): says nothing, so not shown
  if (!(lo > 0 && hi > 0 && Number.isFinite(lo) && Number.isFinite(hi)) || hi / lo > MAX_SPAN){
    for (const s of ['-lo', '-hi']){
      $(id + s).textContent = 'not identified';
      $(id + s).title = 'the interval spans more than three decades: these runs do not pin it';
    }
    return;
  }
  put(id + '-lo', lo); put(id + '-hi', hi);
  $(id + '-lo').title = ''; $(id + '-hi').title = '';
}
const MAX_SPAN = 1e3;
const SI = {K: 1e3, k: 1e3, M: 1e6, B: 1e9, G: 1e9, T: 1e12, P: 1e15};
const UNIT = /\s*(flops?|tokens?|toks?|params?|parameters?)$/i;
const QTY = /^([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([KkMBGTP]?)$/;
function quantity(name, text){  // the CLI's SI suffixes (cli.flags.expand_si), G, P and a unit
  const s = String(text).trim().replace(/[,_](?=\d)/g, '').replace(UNIT, '');
  const m = QTY.exec(s);
  if (!m) throw new Error(name + ': cannot read "' + text + '" as a number '
                          + '(e.g. 1e22, 1e22 FLOPs, 7B, 1.4T tokens)');
  const v = Number(m[1]) * (m[2] ? SI[m[2]] : 1);
  if (!(v > 0) || !Number.isFinite(v)) throw new Error(name + ' must be a positive number, got "'
                                                       + text + '"');
  return v;
}
const OUT = ['plan-N-used', 'plan-D-used', 'plan-L', 'plan-L-lo', 'plan-L-hi', 'plan-Nstar',
             'plan-Nstar-lo', 'plan-Nstar-hi', 'plan-Dstar', 'plan-Dstar-lo', 'plan-Dstar-hi',
             'plan-Lstar', 'plan-Lstar-lo', 'plan-Lstar-hi', 'plan-LS-sup', 'plan-LS-dist',
             'plan-distill-verdict'];
function clear(){  // no number from an earlier input stays on screen
  for (const id of OUT) if ($(id)) $(id).textContent = '';
}
function run(){
  const level = $('plan-level').value, q = (1 - Number(level)) / 2;
  const mode = $('plan-mode-C').checked ? 'C' : 'ND';
  $('plan-error').textContent = '';
  clear();
  for (const el of document.querySelectorAll('#planner .plan-budget'))  // N*, D*, L*: C mode only
    el.style.display = mode === 'C' ? '' : 'none';
  $('planner').dataset.mode = mode;
  try {
    compute(mode, level, q);
    $('planner').dataset.ready = '1';
  } catch (e) {
    clear();
    $('plan-error').textContent = e.message;
    $('planner').dataset.ready = 'error';
  }
}
function compute(mode, level, q){
  let N, D;
  if (mode === 'C'){
    const C = quantity('C', $('plan-C').value);
    const o = optimal(natural(P.theta), C);
    N = o.N; D = o.D;
    put('plan-Nstar', o.N); put('plan-Dstar', o.D); put('plan-Lstar', o.L);
    const rows = P.draws.map(th => optimal(natural(th), C));
    for (const k of ['N', 'D', 'L']){
      const vals = rows.map(r => r[k]);
      let lo = quantile(vals, q), hi = quantile(vals, 1 - q);
      if (P.allocation && k !== 'L'){  // the runs' isoFLOP optima about N* (allocation_interval)
        const T = P.terms[level], A = P.allocation;
        const sb = (Math.log(hi) - Math.log(lo)) / (2 * T.z);
        const h = Math.hypot(T.z * sb, T.t_alloc * A.rms * Math.sqrt(1 + 1 / A.n));
        const c = Math.log(o[k]);
        lo = Math.exp(c - h); hi = Math.exp(c + h);
      }
      putInterval('plan-' + k + 'star', lo, hi);
    }
  } else {
    N = quantity('N', $('plan-N').value);
    D = quantity('D', $('plan-D').value);
  }
  const f = forecast(N, D, level);
  put('plan-N-used', N); put('plan-D-used', D);
  put('plan-L', f.L); putInterval('plan-L', f.lo, f.hi);
  if (P.distill){
    const LT = quantity('teacher loss L_T', $('plan-LT').value);
    const o = distill(N, D, LT);
    put('plan-LS-sup', o.sup); put('plan-LS-dist', o.dist);
    $('plan-distill-verdict').textContent = o.dist < o.sup
      ? 'distilling from this teacher beats supervised training at this N and D'
      : 'supervised training is as good or better at this N and D';
  }
}
for (const id of ['plan-C', 'plan-N', 'plan-D', 'plan-level', 'plan-mode-C', 'plan-mode-ND',
                  'plan-LT']){
  const el = $(id);
  if (!el) continue;  // no distillation preset: no teacher-loss input
  el.addEventListener('input', run);
  el.addEventListener('change', run);  // a select or radio button in every browser
}
$('plan-run').addEventListener('click', run);
run();
})();
"""


def planner_html(data: dict[str, Any], caption: str = "") -> str:
    """Inputs, output cells (ids ``plan-*``) and the script; numbers shown to 6 digits."""
    payload = json.dumps(data).replace("</", "<\\/")
    d = {"C": "1e22", "N": "1e9", "D": "2e10", **data.get("start", {})}  # the inputs' first values
    levels = "".join(
        f"<option value='{k}'{' selected' if k == '0.9' else ''}>{k}</option>"
        for k in data["terms"]
    )
    cells = (
        "<tr><th>N used</th><td id='plan-N-used'></td><td></td><td></td></tr>"
        "<tr><th>D used</th><td id='plan-D-used'></td><td></td><td></td></tr>"
        "<tr><th>forecast: the loss a run at this N, D will reach</th><td id='plan-L'></td>"
        "<td id='plan-L-lo'></td><td id='plan-L-hi'></td></tr>"
        "<tr class='plan-budget'><th>N* (6ND)</th><td id='plan-Nstar'></td>"
        "<td id='plan-Nstar-lo'></td><td id='plan-Nstar-hi'></td></tr>"
        "<tr class='plan-budget'><th>D* (6ND)</th><td id='plan-Dstar'></td>"
        "<td id='plan-Dstar-lo'></td><td id='plan-Dstar-hi'></td></tr>"
        "<tr class='plan-budget'><th>L* (6ND): the fitted law's optimum</th>"
        "<td id='plan-Lstar'></td><td id='plan-Lstar-lo'></td><td id='plan-Lstar-hi'></td></tr>"
    )
    note = (
        "<p class='plan-budget' id='plan-L-note'>At a budget the forecast and L* are the same "
        "number with two intervals that answer two questions. The forecast interval is where "
        "one training run at N*, D* will land: the refits' spread, the runs' scatter about the "
        "law and the calibrated widening beyond the fitted runs (`lmforecast supervised "
        "predict`). The L* interval is only the refits' spread of the law's optimal loss, how "
        "well these runs pin down the law's optimum (`supervised allocate`); it is narrower "
        "and says nothing of a single run's scatter. Use the forecast interval for a run you "
        "plan to train.</p>"
    )
    distill = ""
    if data.get("distill"):
        preset = html.escape(data["distill"]["preset"])
        distill = (
            f"<h4>Distillation or supervised? ({preset} coefficients)</h4>"
            "<p><label>teacher loss L_T <input id='plan-LT' value='2.3' size='6'></label> "
            "for a student of the N and D used above (Busbridge et al. 2025, Eq. 8; the "
            "teacher's own cost is not counted here: `lmforecast distill plan` counts it)</p>"
            "<table id='plan-distill'><tr><th>student, supervised L~_S (Eq. 1)</th>"
            "<td id='plan-LS-sup'></td></tr><tr><th>student, distilled L_S (Eq. 8)</th>"
            "<td id='plan-LS-dist'></td></tr><tr><th>answer</th>"
            "<td id='plan-distill-verdict'></td></tr></table>"
        )
    return (
        f"<div id='planner'><p>{html.escape(caption)}</p>"
        "<p><label><input type='radio' name='plan-mode' id='plan-mode-C' checked> compute "
        f"budget C (FLOPs) <input id='plan-C' value='{d['C']}' size='12'></label> &nbsp; "
        "<label><input type='radio' name='plan-mode' id='plan-mode-ND'> N "
        f"<input id='plan-N' value='{d['N']}' size='10'> D "
        f"<input id='plan-D' value='{d['D']}' size='10'>"
        "</label> &nbsp; <label>level <select id='plan-level'>"
        f"{levels}</select></label> <button id='plan-run'>compute</button> "
        "<span id='plan-error' style='color:#b00'></span></p>"
        "<table id='plan-out'><thead><tr><th></th><th>value</th><th>lower</th><th>upper</th>"
        f"</tr></thead><tbody>{cells}</tbody></table>{note}{distill}"
        f"<script type='application/json' id='planner-data'>{payload}</script>"
        f"<script>{_JS}</script></div>"
    )
