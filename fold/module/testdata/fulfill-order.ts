export function fold(view: View, event: Event): View {
  const fieldOf = (value: Json | undefined, name: string): Json | undefined =>
    typeof value === 'object' && value !== null && !Array.isArray(value) ? value[name] : undefined;
  const textOf = (value: Json | undefined, otherwise: string): string =>
    typeof value === 'string' && value !== '' ? value.slice(0, 64) : otherwise;
  const cents = (value: number): number => Math.round(value * 100) / 100;
  const output = fieldOf(event.data, 'output');
  const total = fieldOf(output, 'total');
  const time = event.time?.slice(0, 10);
  if (time === undefined || typeof total !== 'number' || total < 0) return view;
  const channel = textOf(fieldOf(output, 'channel'), 'Other');
  const points = view.revenue?.lines[0]?.points ?? [];
  const last = points.at(-1);
  const day = last !== undefined && last.at > time ? last.at : time;
  const since = new Date(new Date(day).getTime() - 29 * 86_400_000).toISOString().slice(0, 10);
  const days = last?.at === day
    ? [...points.slice(0, -1), { at: day, value: cents(last.value + total) }]
    : [...points, { at: day, value: total }];
  const counts = new Map((view.channels?.values ?? []).map(({ name, value }) => [name, value]));
  counts.set(channel, (counts.get(channel) ?? 0) + 1);
  const bin = total < 25 ? 0 : total < 50 ? 1 : total < 100 ? 2 : 3;
  const sizes = ['Under $25', '$25 to $50', '$50 to $100', '$100 and over'].map((name, at) => ({
    name,
    value: (view.sizes?.values[at]?.value ?? 0) + (at === bin ? 1 : 0),
  }));
  const orders = (view.figures?.values[0]?.value ?? 0) + 1;
  const revenue = cents((view.figures?.values[1]?.value ?? 0) + total);
  const order = [textOf(fieldOf(output, 'order'), 'Unnamed'), channel, total, time];
  return {
    figures: {
      values: [
        { name: 'Orders', value: orders },
        { name: 'Revenue (USD)', value: revenue },
        { name: 'Average order (USD)', value: cents(revenue / orders) },
      ],
    },
    revenue: { unit: 'USD', period: 'day', lines: [{ name: 'Revenue', points: days.filter(({ at }) => at >= since) }] },
    channels: {
      unit: 'orders',
      values: [...counts].toSorted(([, one], [, other]) => other - one).slice(0, 200).map(([name, value]) => ({ name, value })),
    },
    sizes: { unit: 'orders', values: sizes },
    latest: {
      columns: [{ name: 'Order' }, { name: 'Channel' }, { name: 'Total', unit: 'USD' }, { name: 'Day' }],
      rows: [order, ...(view.latest?.rows ?? [])].slice(0, 10),
    },
  };
}
